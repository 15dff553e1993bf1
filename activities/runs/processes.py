"""Which agent process groups this host's workers have running, so that a worker killed during a run
leaves nothing behind for long: its successor on the host kills what is left when it starts.

One file per run under `WORKTREE_BASE/.runs/`, naming the process group and the worker, each with
its start time, so a recycled process id is never taken for the one recorded.
"""

from __future__ import annotations

import json
import logging
import os
import signal
from pathlib import Path

from activities.sandbox.stops import signal_group

log = logging.getLogger(__name__)


def start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (field 22 of /proc/<pid>/stat); None when
    it is gone, or when this system has no /proc."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]  # after the command name, which may hold spaces


class RunProcesses:
    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def record(self, run_id: str, group: int) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        entry = {"group": group, "group_started": start_time(group),
                 "worker": os.getpid(), "worker_started": start_time(os.getpid())}
        scratch = self.directory / f".{run_id}.tmp"
        scratch.write_text(json.dumps(entry))
        scratch.replace(self.directory / f"{run_id}.json")

    def forget(self, run_id: str) -> None:
        (self.directory / f"{run_id}.json").unlink(missing_ok=True)

    def reap(self) -> list[str]:
        """Kill the groups of runs whose worker is gone; the runs they belonged to."""
        reaped = []
        for path in sorted(self.directory.glob("*.json")) if self.directory.is_dir() else []:
            try:
                entry = json.loads(path.read_text())
                group, worker = int(entry["group"]), int(entry["worker"])
            except (OSError, ValueError, KeyError, TypeError):
                path.unlink(missing_ok=True)
                continue
            if worker != os.getpid() and start_time(worker) is not None \
                    and start_time(worker) == entry.get("worker_started"):
                continue  # its worker still runs it
            leader = start_time(group)
            # The leader still runs, or it is gone and what it started may still hold the group's id
            # (an id is not handed out again while a group of that id exists); a leader id taken by a
            # newer process (another start time) is not ours.
            if leader is None or leader == entry.get("group_started"):
                if signal_group(group, signal.SIGKILL):
                    log.warning("killed the processes of run %s, left by a worker that stopped", path.stem)
            path.unlink(missing_ok=True)
            reaped.append(path.stem)
        return reaped
