"""Which worktrees the service made itself: those it resumes, and never adopts as someone else's.

A worktree made by create_worktree gets a mark in its administrative folder inside the repository
(`.git/worktrees/<name>/`, where git keeps the worktree's HEAD and index and ignores other files).
The mark goes with the worktree when git removes or prunes it. Reading it costs no git process.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

MARK = "isolator-made"


def _admin_dir(worktree: Path) -> Path | None:
    """The folder git's `.git` file in a linked worktree points at; None for anything else."""
    try:
        content = (worktree / ".git").read_text(errors="replace").strip()
    except OSError:
        return None
    if not content.startswith("gitdir: "):
        return None
    admin = Path(content.removeprefix("gitdir: "))
    return admin if admin.is_absolute() else (worktree / admin).resolve()


def mark_as_made_here(worktree: Path) -> None:
    admin = _admin_dir(worktree)
    if admin is not None:
        with contextlib.suppress(OSError):
            (admin / MARK).write_text("made by isolator's create_worktree\n")


def made_here(worktree: Path) -> bool:
    admin = _admin_dir(worktree)
    return admin is not None and (admin / MARK).is_file()
