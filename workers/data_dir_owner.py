"""One `isolator dev` per data dir: a second would start a second Temporal server on the same database
file, and a second worker on the same worktrees."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import IO

OWNER_FILE = "isolator-dev.pid"


class DataDirInUse(Exception):
    pass


def own_data_dir(data_dir: Path) -> IO[str]:
    """The data dir's owner file, locked for as long as it stays open (the kernel lets go of it when
    this process ends, however it ends); refused while another process holds it."""
    data_dir.mkdir(parents=True, exist_ok=True)
    owner = open(data_dir / OWNER_FILE, "a+")
    try:
        fcntl.flock(owner, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        owner.seek(0)
        pid = owner.read().strip() or "unknown"
        owner.close()
        raise DataDirInUse(f"another isolator dev (pid {pid}) uses this data dir, {data_dir}: stop it first, "
                           "or give this one another with --data-dir") from None
    owner.seek(0)
    owner.truncate()
    owner.write(f"{os.getpid()}\n")
    owner.flush()
    return owner
