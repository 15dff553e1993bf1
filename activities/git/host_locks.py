"""Host-wide locks: serialise work on one path across every worker process of this host."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import os
from pathlib import Path
from typing import AsyncIterator


@contextlib.asynccontextmanager
async def host_locks(worktree_base: Path, *paths: Path) -> AsyncIterator[None]:
    """The locks of several paths, in the order given; a path named twice is locked once (a second
    lock of the same file from this process would wait for itself)."""
    async with contextlib.AsyncExitStack() as held:
        for path in dict.fromkeys(path.resolve() for path in paths):
            await held.enter_async_context(host_lock(worktree_base, path))
        yield


@contextlib.asynccontextmanager
async def host_lock(worktree_base: Path, path: Path) -> AsyncIterator[None]:
    """Hold the lock of `path` (a worktree, or a repository whose `.git/worktrees` git changes).

    Take a worktree's lock before its repository's, never the other way round. The lock files
    live under WORKTREE_BASE/.locks.
    """
    locks = worktree_base / ".locks"
    locks.mkdir(parents=True, exist_ok=True)
    name = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:32]
    descriptor = os.open(locks / f"{name}.lock", os.O_CREAT | os.O_RDWR, 0o600)
    try:
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                await asyncio.sleep(0.01)  # the worker keeps heartbeating meanwhile (workers/interceptors.py)
        yield
    finally:
        os.close(descriptor)  # closing releases the lock
