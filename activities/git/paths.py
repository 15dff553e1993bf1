"""Where worktrees live, and the proof that a path lies inside the worktree base."""

from __future__ import annotations

import re
from pathlib import Path

_CODEBASE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


class UnsafePathError(ValueError):
    pass


def is_valid_codebase_name(name: str) -> bool:
    return bool(_CODEBASE_NAME.match(name)) and ".." not in name


def ensure_inside(base: Path, path: Path) -> Path:
    """Return `path` with symlinks resolved, or raise if it is not strictly below `base`."""
    root = base.resolve()
    resolved = path.resolve()
    if resolved == root or not resolved.is_relative_to(root):
        raise UnsafePathError(f"{path} is outside the worktree base {root}")
    return resolved


def worktree_path(base: Path, codebase_name: str, branch: str) -> Path:
    """`<base>/<codebase>/<branch with / replaced by ->`, proven to lie inside base."""
    if not is_valid_codebase_name(codebase_name):
        raise UnsafePathError(f"codebase name {codebase_name!r} is not usable as a folder name")
    leaf = branch.replace("/", "-")
    if leaf in {"", ".", ".."} or leaf.startswith("."):
        raise UnsafePathError(f"branch {branch!r} is not usable as a folder name")
    return ensure_inside(base, base / codebase_name / leaf)
