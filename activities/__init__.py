"""Every side effect of the service: git, PostgreSQL, the sandboxed programs, the chat platforms.

Workflows call these as Temporal activities, through the typed stubs of `workflows/steps/`, whose
folders mirror the folders here. One folder per concept, each saying in its `__init__.py` what it
holds, what it may import and when to touch it (docs/architecture.md draws them):

- `git/`: the service's own git and disk plumbing; `sandbox/`: where user programs run;
- `chat/`: replies, conversations, refusals, the platforms;
- `providers/`: the isolation providers (the git worktree);
- `environments/`: an environment's rows, signals, disk work, archives, ports and set-up;
- `warm/`: the warm pool; `codebases/`: registering repositories;
- `runs/`: an agent run and its drivers; `results/`: commits, pushes and pull requests.

The one module at this level, `database.py`, is the PostgreSQL pool and row conversions that every
folder shares. Nothing here imports `workflows/`, `api/` or `workers/`.
"""
