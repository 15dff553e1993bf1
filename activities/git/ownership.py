"""Which worktrees the service made itself: those it resumes, and never adopts as someone else's.

A worktree made by create_worktree gets a mark in its administrative folder inside the repository
(`.git/worktrees/<name>/`, where git keeps the worktree's HEAD and index and ignores other files).
The mark goes with the worktree when git removes or prunes it. Reading it costs no git process.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from activities.git.runner import admin_dir

MARK = "isolator-made"


def mark_as_made_here(worktree: Path) -> None:
    admin = admin_dir(worktree)
    if admin is not None:
        with contextlib.suppress(OSError):
            (admin / MARK).write_text("made by isolator's create_worktree\n")


def made_here(worktree: Path) -> bool:
    admin = admin_dir(worktree)
    return admin is not None and (admin / MARK).is_file()
