"""Environments: a conversation's place to work (a worktree, its rows, its ports, its set-up), as the
workflows see it.

`records.py` keeps the `environments` rows (and `/status`'s details, with a retried removal that
`signals.py` asks the workflow about); `signals.py` talks to an environment's workflow from other
workflows; `isolation.py` serves the disk work of `HOST_OPERATIONS` on the codebase's host by
handing it to the environment's isolation provider (`activities/providers/`); `archives.py` keeps
the rows of removed and hibernated environments; `worktree_facts.py` reads what `/worktree why`
shows; `ports.py` gives each environment a block of ports; `setup.py` runs the repository's set-up
and teardown in the sandbox.

May import: `activities/providers/`, `activities/sandbox/`, `activities/chat/` (set-up progress),
`activities/git/`, `activities/database.py`, `isolator/`. Touch it to change what an environment
records or how its life is driven; how a worktree is made on disk belongs to `providers/`.
"""
