"""The cgroups of the runs (activities/sandbox/limits.py says what they are for): where this worker
may make them, found once when it starts, and each run's own, with the kernel's files that limit it
and count its limits' hits, in both versions of the cgroup tree.

Where: a folder of the service's own (`isolator-<uid>`), which holds a `run-<random>` cgroup per run.

cgroup v2 first: the folder goes under the worker's own cgroup when that cgroup may hand the memory,
pids and cpu controllers down (its `cgroup.subtree_control`), else beside it, under its parent. The
kernel lets a cgroup that holds processes hand no controller down, so a worker alone in its cgroup
needs the parent: root may write anywhere; an unprivileged worker needs a delegated subtree with
itself in a child of it (systemd: `Delegate=yes` and `DelegateSubgroup=`).
cgroup v1 (a "hybrid" host: memory, pids and cpu each in a hierarchy of its own): the folder goes
under the worker's own cgroup in each of the three, which v1 allows whoever holds processes.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Literal

log = logging.getLogger(__name__)

CONTROLLERS = ("memory", "pids", "cpu")
PROC = Path("/proc/self")
PERIOD_US = 100_000  # the CPU limit's period
STALE_SECONDS = 60.0  # a run's cgroup this old was joined long ago: when empty, its run is over
# Writes itself (`0`) into each file named before `--`, then becomes the program.
JOIN = 'while [ "$1" != -- ]; do echo 0 > "$1" || exit 125; shift; done; shift; exec "$@"'
# The file that moves the joining `sh` into a cgroup. v1's `tasks` moves one thread (the shell has
# but one): the kernel then takes no global lock, where moving a whole process (`cgroup.procs`) waits
# for an RCU grace period: 1 ms on an idle host, 10 ms and more on a busy one. v2 has only the latter
# into a cgroup of its own (its `cgroup.threads` moves threads only within one resource domain).
JOINED_BY = {1: "tasks", 2: "cgroup.procs"}
# Files a kernel without swap accounting does not have.
OPTIONAL = frozenset({"memory.swap.max", "memory.memsw.limit_in_bytes", "cpu.max.burst", "cpu.cfs_burst_us"})
# Where each version counts a limit's hits: the controller, its file and its counter there.
EVENTS = {
    2: {"memory": ("memory.events", "oom_kill"), "pids": ("pids.events", "max")},
    1: {"memory": ("memory.oom_control", "oom_kill"), "pids": ("pids.events", "max")},
}


@dataclass(frozen=True)
class Cgroups:
    version: Literal[1, 2]
    folders: dict[str, Path]  # controller -> the service's folder in its hierarchy (v2: one folder for all)


class NoCgroups(Exception):
    """This worker may make no cgroup with the three controllers; the message says why."""


@dataclass(frozen=True)
class _Mount:
    fstype: str  # cgroup (v1) or cgroup2
    root: str  # the cgroup the mount shows at its mount point
    point: Path
    options: frozenset[str]  # a v1 hierarchy's controllers are among them

    def folder_of(self, cgroup: str) -> Path | None:
        """Where `cgroup` (a path in the hierarchy, as /proc/self/cgroup says it) is in this mount."""
        if self.root != "/" and cgroup != self.root and not cgroup.startswith(self.root + "/"):
            return None
        return self.point / cgroup[len(self.root):].lstrip("/")


def find(uid: int, mountinfo: str | None = None, own: str | None = None) -> Cgroups:
    """The service's folders, made if missing; `mountinfo` and `own` are /proc/self/mountinfo and
    /proc/self/cgroup (read unless given). Raises NoCgroups with what each version lacked."""
    mounts = list(_mounts((PROC / "mountinfo").read_text() if mountinfo is None else mountinfo))
    cgroups = _own_cgroups((PROC / "cgroup").read_text() if own is None else own)
    problems = []
    for version in (_v2, _v1):
        try:
            return version(mounts, cgroups, f"isolator-{uid}")
        except NoCgroups as problem:
            problems.append(str(problem))
    raise NoCgroups("; ".join(problems))


def _v2(mounts: list[_Mount], cgroups: dict[str, str], name: str) -> Cgroups:
    mount = next((mount for mount in mounts if mount.fstype == "cgroup2"), None)
    own = mount.folder_of(cgroups[""]) if mount is not None and "" in cgroups else None
    if mount is None or own is None:
        raise NoCgroups("cgroup v2: the worker's cgroup is not mounted here")
    tried = []
    for base in (own, own.parent) if own != mount.point else (own,):
        try:
            return Cgroups(2, dict.fromkeys(CONTROLLERS, _delegated(base, name)))
        except (NoCgroups, OSError) as problem:
            tried.append(f"{base}: {problem}")
    raise NoCgroups("cgroup v2: " + "; ".join(tried))


def _delegated(base: Path, name: str) -> Path:
    """`base/name`, its runs given the three controllers: `base` hands them to it, it to its runs."""
    missing = set(CONTROLLERS) - set((base / "cgroup.controllers").read_text().split())
    if missing:
        raise NoCgroups(f"no {', '.join(sorted(missing))} controller")
    try:
        _hand_down(base)
    except OSError as error:
        raise NoCgroups(f"it cannot hand its controllers down ({error.strerror}: it holds processes, or it "
                        "is not this user's)") from None
    folder = base / name
    folder.mkdir(exist_ok=True)
    _hand_down(folder)
    return folder


def _hand_down(folder: Path) -> None:
    enabled = (folder / "cgroup.subtree_control").read_text().split()
    wanted = [controller for controller in CONTROLLERS if controller not in enabled]
    if wanted:
        (folder / "cgroup.subtree_control").write_text(" ".join(f"+{controller}" for controller in wanted))


def _v1(mounts: list[_Mount], cgroups: dict[str, str], name: str) -> Cgroups:
    folders = {}
    for controller in CONTROLLERS:
        own = next((cgroup for names, cgroup in cgroups.items() if controller in names.split(",")), None)
        found = [mount.folder_of(own) for mount in mounts
                 if own is not None and mount.fstype == "cgroup" and controller in mount.options]
        folder = next((folder for folder in found if folder is not None), None)
        if folder is None:
            raise NoCgroups(f"cgroup v1: no {controller} hierarchy holding the worker's cgroup is mounted")
        try:
            (folder / name).mkdir(exist_ok=True)
        except OSError as error:
            raise NoCgroups(f"cgroup v1: {error.strerror}: {folder / name}") from None
        folders[controller] = folder / name
    return Cgroups(1, folders)


def _mounts(mountinfo: str) -> Iterator[_Mount]:
    for line in mountinfo.splitlines():
        fields = line.split()
        end = fields.index("-")  # the optional fields end here; then the type, the source, the options
        if fields[end + 1] in ("cgroup", "cgroup2"):
            yield _Mount(fields[end + 1], fields[3], Path(fields[4]), frozenset(fields[end + 3].split(",")))


def _own_cgroups(own: str) -> dict[str, str]:
    """The worker's cgroup in each hierarchy: its controllers ("memory", "cpu,cpuacct"; "" for v2) -> path."""
    cgroups = {}
    for line in own.splitlines():
        _, controllers, path = line.split(":", 2)
        cgroups[controllers] = path
    return cgroups


def limit_files(version: int, memory_bytes: int, processes: int, cpu_quota_us: int) -> list[tuple[str, str, str]]:
    """(controller, file, value) to write into a run's cgroup, in this order."""
    if version == 2:
        return [("memory", "memory.max", str(memory_bytes)), ("memory", "memory.swap.max", "0"),
                ("pids", "pids.max", str(processes)), *cpu_files(2, cpu_quota_us)]
    # v1 refuses a limit of memory and swap together under the one of memory alone: memory goes first.
    return [("memory", "memory.limit_in_bytes", str(memory_bytes)),
            ("memory", "memory.memsw.limit_in_bytes", str(memory_bytes)), ("pids", "pids.max", str(processes)),
            *cpu_files(1, cpu_quota_us)]


def cpu_files(version: int, quota_us: int) -> list[tuple[str, str, str]]:
    """The quota per period, and as much again of burst: CPU time a run left unused may be spent at
    once, so a program that starts on all cores (Claude Code's start) is not stopped half a period."""
    if version == 2:
        return [("cpu", "cpu.max", f"{quota_us} {PERIOD_US}"), ("cpu", "cpu.max.burst", str(quota_us))]
    return [("cpu", "cpu.cfs_period_us", str(PERIOD_US)), ("cpu", "cpu.cfs_quota_us", str(quota_us)),
            ("cpu", "cpu.cfs_burst_us", str(quota_us))]


def cap_cpus(found: Cgroups, quota_us: int) -> None:
    """The CPU limit of all the runs together, on the service's folder (v1 refuses a run's above it)."""
    for _, file, value in cpu_files(found.version, quota_us):
        if file not in OPTIONAL or (found.folders["cpu"] / file).exists():
            (found.folders["cpu"] / file).write_text(value)


def counter(text: str, name: str) -> int:
    """The counter `name` of an events file ("oom_kill 1" among its lines)."""
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key == name:
            return int(value)
    return 0


class RunCgroup:
    """One run's cgroup, in each hierarchy (v2: one folder), made with its limits. Raises OSError
    when it cannot be made."""

    def __init__(self, found: Cgroups, limits: list[tuple[str, str, str]]) -> None:
        name = f"run-{secrets.token_hex(6)}"
        self.version = found.version
        self.folders = {controller: folder / name for controller, folder in found.folders.items()}
        self.made: list[Path] = []
        try:
            for folder in dict.fromkeys(self.folders.values()):
                folder.mkdir()
                self.made.append(folder)
            for controller, file, value in limits:
                path = self.folders[controller] / file
                if file not in OPTIONAL or path.exists():
                    path.write_text(value)
        except OSError:
            remove_folders(self.made)
            raise

    def joining(self) -> list[str]:
        """The argv before the program's that puts the program in this cgroup."""
        return ["/bin/sh", "-c", JOIN, "sh", *(str(folder / JOINED_BY[self.version]) for folder in self.made), "--"]

    def hit(self) -> str | None:
        """The controller whose limit the run has hit ("memory": a process was killed for it; "pids":
        a fork was refused), if any."""
        for controller, (file, name) in EVENTS[self.version].items():
            try:
                if counter((self.folders[controller] / file).read_text(), name):
                    return controller
            except OSError:  # removed under it: nothing to say
                pass
        return None

    def members(self) -> set[int]:
        pids: set[int] = set()
        for folder in self.made:
            try:
                pids.update(int(pid) for pid in (folder / "cgroup.procs").read_text().split())
            except OSError:
                pass
        return pids

    async def remove(self) -> None:
        """Kills whatever is left in it (a process that left the run's process group: an unconfined
        run's daemon), then removes it."""
        for _ in range(100):
            left = self.members()
            if not left and remove_folders(self.made):
                return
            for pid in left:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            await asyncio.sleep(0.01)
        log.warning("a run's cgroup is left behind (the worker's next start removes it): %s", self.made)


def remove_folders(folders: list[Path]) -> bool:
    """Whether every folder is gone (the kernel refuses while a process is in one)."""
    gone = True
    for folder in folders:
        try:
            folder.rmdir()
        except FileNotFoundError:
            pass
        except OSError:
            gone = False
    return gone


def sweep(found: Cgroups) -> None:
    """The empty cgroups of runs that a worker ended abruptly left behind (one in use is refused)."""
    for folder in set(found.folders.values()):
        for entry in folder.glob("run-*"):
            try:
                if time.time() - entry.stat().st_mtime > STALE_SECONDS:
                    entry.rmdir()
            except OSError:
                pass
