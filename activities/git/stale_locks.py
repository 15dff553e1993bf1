"""Stale git locks: a git killed mid-way leaves `*.lock` files that make every later git refuse.

git holds a lock file open from the moment it creates it until it renames or deletes it, so a lock
that no running process has open belongs to a git that is gone: it is removed and the command
retried, once. A lock some process still holds is never touched. Only lock files inside the
repository's own git folders are considered.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from activities.git.runner import GitError, GitResult, run_git

_LOCK_REFUSAL = re.compile(r"Unable to create '([^']+\.lock)': File exists")


async def run_git_recovering(repository: Path, *args: str, cwd: Path | str | None = None,
                             env: dict[str, str] | None = None) -> GitResult:
    """`run_git`, which clears a stale lock of `repository` that stops it, and tries again once."""
    try:
        return await run_git(*args, cwd=cwd, env=env)
    except GitError as error:
        if not await clear_stale_lock(repository, error.stderr):
            raise
    return await run_git(*args, cwd=cwd, env=env)


async def clear_stale_lock(repository: Path, stderr: str) -> bool:
    """True when git's refusal named a lock of this repository that no process holds, now removed."""
    found = _LOCK_REFUSAL.search(stderr)
    if found is None:
        return False
    lock = Path(found.group(1)).resolve()
    common = await run_git("rev-parse", "--path-format=absolute", "--git-common-dir", cwd=repository)
    if not lock.is_relative_to(Path(common.stdout.strip()).resolve()):
        return False
    try:
        seen = lock.stat().st_ino
        if is_held(lock) or lock.stat().st_ino != seen:  # a new git took it meanwhile
            return False
        lock.unlink()
    except FileNotFoundError:
        pass  # gone by itself: the retry may go on
    return True


def is_held(path: Path) -> bool:
    """Whether any process of this host has `path` open (Linux: /proc/<pid>/fd)."""
    target = str(path)
    for process in os.scandir("/proc"):
        if not process.name.isdigit():
            continue
        try:
            descriptors = os.scandir(f"/proc/{process.name}/fd")
        except PermissionError:  # another user's: a git among them might hold it, so it counts as held
            if _command(process.name) == "git":
                return True
            continue
        except OSError:  # gone meanwhile
            continue
        with descriptors:
            for descriptor in descriptors:
                try:
                    if os.readlink(descriptor.path) == target:
                        return True
                except OSError:
                    continue
    return False


def _command(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""
