"""Codebases: the repositories the service works in, and the hosts that hold them.

`registration.py` finds and records codebase rows (local activities) and inspects or clones a
repository on its host; `host_workers.py` asks Temporal whether a host has a worker before a
registration waits for it; `views.py` counts a codebase's worktrees for `/status` on its host;
`rebuild.py` clones a checkout found missing again and puts its worktrees back (a lost disk),
`moving.py` moves a codebase to another host, both through `placing.py` (a worktree put on this host
from its archive or branch at origin), saying what happened in `relocation_texts.py`. The
pure URL and name helpers every layer shares are `isolator/repositories.py`.

May import: `activities/environments/`, `activities/warm/` (a new codebase's pool), `activities/providers/`, `activities/chat/`,
`activities/sandbox/`, `activities/git/`, `activities/database.py`, `isolator/`. Touch it to change
how a repository becomes a codebase, or what is said about one.
"""
