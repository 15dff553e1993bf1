"""Disk use as the disk counts it: real blocks (st_blocks), a hard-linked file once, symlinks not
followed, within a time budget so that no message waits on a huge tree."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path


def disk_usage(root: Path, budget_seconds: float) -> tuple[int, bool]:
    """Bytes of real blocks under `root` (st_blocks), a hard-linked file counted once, symlinks not
    followed; (so far, False) when the budget runs out first."""
    deadline = time.monotonic() + budget_seconds
    seen: set[tuple[int, int]] = set()
    total, folders = 0, [root]
    while folders:
        if time.monotonic() > deadline:
            return total, False
        try:
            entries = list(os.scandir(folders.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(info.st_mode):
                folders.append(Path(entry.path))
            if (info.st_dev, info.st_ino) in seen:
                continue
            if info.st_nlink > 1:
                seen.add((info.st_dev, info.st_ino))
            total += info.st_blocks * 512
    return total, True
