"""This machine: the sandbox bubblewrap makes, the limits a run is held to, and the free disk space."""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

from activities.doctor.check import Check
from activities.sandbox import cgroups
from activities.sandbox.bubblewrap import probe
from activities.sandbox.limits import Amounts
from activities.sandbox.view import system_mounts
from isolator.settings import Settings

# Below this, a clone or a run's worktree may fill the disk midway.
LEAST_FREE_BYTES = 1 << 30


async def host_checks(settings: Settings) -> list[Check]:
    checks = [] if settings.sandbox == "off" else [await asyncio.to_thread(sandbox, settings)]
    return [*checks, await asyncio.to_thread(limits, settings), *disks(settings)]


def sandbox(settings: Settings) -> Check:
    name = f"Sandbox: bubblewrap (SANDBOX_NETWORK={settings.sandbox_network})"
    problem = probe(settings.sandbox_network, system_mounts())
    if problem:
        return Check.failed(name, problem, "install bubblewrap (Debian: apt-get install bubblewrap) and allow "
                                           "unprivileged user namespaces (docs/sandbox.md), or set SANDBOX=off")
    return Check.passed(name, "a sandbox starts, and its program keeps no capability")


def limits(settings: Settings) -> Check:
    """As the worker finds its cgroups at start (without sweeping them: a worker may be running)."""
    name = "Sandbox: limits per run (SANDBOX_MEMORY_MB, SANDBOX_MAX_PROCESSES, SANDBOX_CPUS)"
    amounts = Amounts.of(settings, len(os.sched_getaffinity(0)))
    try:
        found = cgroups.find(os.getuid())
    except (cgroups.NoCgroups, OSError) as problem:
        return Check.failed(name, f"no cgroup, so a run is limited by prlimit at most ({problem})",
                            "run the worker as root or in a delegated cgroup subtree (docs/sandbox.md, Limits)")
    return Check.passed(name, f"{amounts} (cgroup v{found.version})")


def disks(settings: Settings) -> list[Check]:
    places = {"ISOLATOR_DATA_DIR": settings.data_dir, "WORKTREE_BASE": settings.worktree_base}
    return [_free_space(variable, path) for variable, path in places.items()]


def _free_space(variable: str, path: Path) -> Check:
    name = f"Disk: free space of {variable} ({path})"
    existing = next(folder for folder in [path, *path.parents] if folder.exists())  # it may be made at start
    free = shutil.disk_usage(existing).free
    if free < LEAST_FREE_BYTES:
        return Check.failed(name, f"only {free >> 20:,} MiB free", "free space there, or point "
                            f"{variable} to a larger disk (the dashboard's Disk page removes old worktrees)")
    return Check.passed(name, f"{free >> 30:,} GiB free")
