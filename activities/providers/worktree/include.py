"""Files git does not track, copied into a new worktree: `.env`, local config, even `node_modules`.

`.worktreeinclude` at the checkout's root (gitignore syntax), plus `.isolator.toml`'s
`worktree.include`, names them; git itself matches the patterns against the checkout's untracked
and ignored files. Files are cloned copy-on-write where the filesystem can (the FICLONE ioctl) and
copied elsewhere. A symlink is copied as a link, never followed: nothing outside the checkout is
read, and nothing outside the worktree is written.
"""

from __future__ import annotations

import asyncio
import errno
import fcntl
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from activities.git.runner import run_git
from isolator.contracts.repository import INCLUDE_FILE

FICLONE = 0x40049409  # _IOW(0x94, 9, int), from linux/fs.h
# Errors that mean "this filesystem cannot clone": fall back to a copy for good.
_NO_CLONE = {errno.EOPNOTSUPP, errno.ENOTTY, errno.EXDEV, errno.EINVAL, errno.ENOSYS, errno.EPERM}


@dataclass
class Copied:
    files: int = 0
    links: int = 0
    skipped: int = 0  # entries whose place in the worktree is not plain (a tracked symlink in the way)


async def copy_included(checkout: Path, worktree: Path, extra_patterns: list[str]) -> Copied:
    patterns = _patterns(checkout, extra_patterns)
    if not patterns:
        return Copied()
    with tempfile.NamedTemporaryFile("w", prefix="isolator-include-", suffix=".txt") as listing:
        listing.write("\n".join(patterns) + "\n")
        listing.flush()
        found = await run_git("ls-files", "--others", "--ignored", f"--exclude-from={listing.name}",
                              "--directory", "-z", cwd=checkout)
    entries = [entry.rstrip("/") for entry in found.stdout.split("\0") if entry]
    return await asyncio.to_thread(_copy_all, checkout.resolve(), worktree.resolve(), entries)


def _patterns(checkout: Path, extra: list[str]) -> list[str]:
    listed = checkout / INCLUDE_FILE
    lines = listed.read_text(errors="replace").splitlines() if listed.is_file() and not listed.is_symlink() else []
    return [line for line in [*lines, *extra] if line.strip() and not line.lstrip().startswith("#")]


def _copy_all(checkout: Path, worktree: Path, entries: list[str]) -> Copied:
    copied = Copied()
    cloning = [True]
    for entry in entries:
        source, target = checkout / entry, worktree / entry
        # The folders above both ends are real folders inside their trees, not links leading out.
        if not _inside(source.parent, checkout) or not _plain_parents(target.parent, worktree):
            copied.skipped += 1
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        _copy_entry(source, target, copied, cloning)
    return copied


def _copy_entry(source: Path, target: Path, copied: Copied, cloning: list[bool]) -> None:
    _copy_path(os.fspath(source), os.fspath(target), os.lstat(source), copied, cloning)


def _copy_path(source: str, target: str, info: os.stat_result, copied: Copied, cloning: list[bool]) -> None:
    """Plain strings and scandir's entries: a folder of thousands of files is copied at cp's pace."""
    if os.path.lexists(target):
        copied.skipped += 1  # the checkout already has it (a tracked file of the same name)
    elif stat.S_ISLNK(info.st_mode):
        os.symlink(os.readlink(source), target)
        copied.links += 1
    elif stat.S_ISDIR(info.st_mode):
        os.mkdir(target, stat.S_IMODE(info.st_mode) | stat.S_IRWXU)
        with os.scandir(source) as children:
            for child in children:
                _copy_path(child.path, os.path.join(target, child.name), child.stat(follow_symlinks=False),
                           copied, cloning)
    elif stat.S_ISREG(info.st_mode):
        _copy_file(source, target, info, cloning)
        copied.files += 1
    else:
        copied.skipped += 1  # sockets, fifos, devices: nothing to copy


def _copy_file(source: str, target: str, info: os.stat_result, cloning: list[bool]) -> None:
    reading = os.open(source, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        writing = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, stat.S_IMODE(info.st_mode))
        try:
            if not (cloning[0] and _cloned(reading, writing, cloning)):
                _copy_bytes(reading, writing, info.st_size)
        finally:
            os.close(writing)
    finally:
        os.close(reading)
    os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns), follow_symlinks=False)


def _cloned(reading: int, writing: int, cloning: list[bool]) -> bool:
    """Copy-on-write, where the filesystem can; the first refusal stops trying for the rest."""
    try:
        fcntl.ioctl(writing, FICLONE, reading)
        return True
    except OSError as error:
        if error.errno not in _NO_CLONE:
            raise
        cloning[0] = False
        return False


def _copy_bytes(reading: int, writing: int, size: int) -> None:
    """In the kernel (copy_file_range), or through Python where the kernel cannot."""
    copied = 0
    try:
        while copied < size and (done := os.copy_file_range(reading, writing, size - copied)):
            copied += done
        while done := os.copy_file_range(reading, writing, 1 << 20):  # it grew meanwhile
            copied += done
    except OSError as error:
        if error.errno not in _NO_CLONE or copied:
            raise
        with open(reading, "rb", closefd=False) as source, open(writing, "wb", closefd=False) as target:
            shutil.copyfileobj(source, target, length=1 << 20)


def _inside(path: Path, root: Path) -> bool:
    resolved = path.resolve()
    return resolved == root or resolved.is_relative_to(root)


def _plain_parents(path: Path, root: Path) -> bool:
    """Every existing folder from `root` down to `path` is a folder, not a link."""
    current = root
    for part in path.relative_to(root).parts:
        current = current / part
        if os.path.islink(current):
            return False
    return True
