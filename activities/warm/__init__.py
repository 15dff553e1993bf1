"""The warm pool: worktrees made and set up before anyone asks, so a new conversation starts at once
(docs/warm.md).

`pool.py` claims a warm worktree for a create (the database decides who gets which, once) and says
what the pool holds; `refill.py` makes, refreshes and trims the pool on the codebase's host. What
they do on disk is `activities/providers/worktree/warm.py`'s.

May import: `activities/providers/`, `activities/git/`, `activities/database.py`, `isolator/`.
Touch it to change how many worktrees wait, when they are refreshed, or how a claim is decided.
"""
