"""The service's own git and disk plumbing, used by every other folder of `activities/`.

`runner.py` is the one way the service runs git (an argument list, never a shell, never a prompt);
`stale_locks.py` recovers from the `*.lock` files a killed git leaves; `host_locks.py` serialises
work on one path across this host's workers; `paths.py` proves a path lies inside the worktree base;
`working_trees.py` reads a worktree's state as git objects; `ownership.py` marks the worktrees the
service made; `disk_usage.py` measures a tree as the disk counts it.

May import: `isolator/` only; it knows nothing of environments, runs or chats. Touch it to change
how git is run or trusted for every caller at once.
"""
