"""Limits per run: what one run of a user's program (the agent, a set-up or teardown command) may take
of the host, so that a fork bomb or a runaway build leaves the service and the other conversations
answering: SANDBOX_MEMORY_MB of memory, SANDBOX_MAX_PROCESSES processes (threads count), and
SANDBOX_CPUS CPUs (by default all but one). All the runs together may take all CPUs but one (or
SANDBOX_CPUS, when it is more): one is kept for the service, however many runs there are.

Each run gets a cgroup of its own (activities/sandbox/cgroups.py), made with its limits before the
run starts, and removed after it, whatever is left in it killed first. The run's first process joins
it before it can start anything: its argv is wrapped in a `sh` that writes itself into the
cgroup, then becomes the program (`exec` keeps the pid, so bubblewrap still leads the run's process
group). While the run goes on, the cgroup's event counters are read every half second: a run that
used all of its memory (the kernel killed one of its processes for it) or reached its limit of
processes (a fork was refused) is stopped as a timeout stops it, and says which.

Where this worker may make no cgroup, `status` says so and why, and what setrlimit can still bound
is bounded, by `prlimit` around the program: each process's data (RLIMIT_DATA; RLIMIT_AS would
break Node's and Bun's huge reservations of address space) and, for a worker that is not root, the
number of the service user's processes (RLIMIT_NPROC counts them all, every run's and the worker's).
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import subprocess
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import AsyncIterator, Awaitable, TypeVar

from activities.sandbox import cgroups
from isolator import metrics
from isolator.settings import Settings

log = logging.getLogger(__name__)

POLL_SECONDS = 0.5

T = TypeVar("T")


@dataclass(frozen=True)
class Amounts:
    """What one run may take."""

    memory_mb: int
    processes: int
    cpus: float
    together_cpus: float  # of all the runs at once

    @classmethod
    def of(cls, settings: Settings, host_cpus: int) -> Amounts:
        cpus = settings.sandbox_cpus or all_but_one(host_cpus)
        return cls(settings.sandbox_memory_mb, settings.sandbox_max_processes, cpus, max(cpus, all_but_one(host_cpus)))

    def __str__(self) -> str:
        return (f"{self.memory_mb:,} MiB of memory, {self.processes:,} processes, {_cpus(self.cpus)}; "
                f"all runs together, {_cpus(self.together_cpus)}")

    def cgroup_files(self, version: int) -> list[tuple[str, str, str]]:
        return cgroups.limit_files(version, self.memory_mb << 20, self.processes, cpu_quota(self.cpus))

    def reached(self, controller: str) -> str:
        """What a run stopped at the limit of `controller` is told."""
        if controller == "memory":
            return f"it used all of its {self.memory_mb:,} MiB of memory (SANDBOX_MEMORY_MB)"
        return f"it reached its limit of {self.processes:,} processes (SANDBOX_MAX_PROCESSES)"


def all_but_one(cpus: int) -> int:
    return max(cpus - 1, 1)


def _cpus(cpus: float) -> str:
    return f"{cpus:g} CPU" + ("" if cpus == 1 else "s")


def cpu_quota(cpus: float) -> int:
    """Microseconds of CPU time per period of cgroups.PERIOD_US; the kernel takes no quota under 1 ms."""
    return max(round(cpus * cgroups.PERIOD_US), 1000)


class CannotLimit(Exception):
    """A run's cgroup could not be made: the run does not start; the message says why."""


@dataclass(frozen=True)
class RunLimits:
    """One run's limits: the argv put before its program's, and its cgroup when there is one."""

    before: tuple[str, ...] = ()
    cgroup: cgroups.RunCgroup | None = None
    amounts: Amounts | None = None

    def wrap(self, argv: list[str]) -> list[str]:
        return [*self.before, *argv]

    async def enforce(self, work: Awaitable[T]) -> tuple[T | None, str | None]:
        """What `work` returns, and None; or, when the run reaches a limit first, None and what the run
        is told of it: `work` is cancelled then, as a timeout cancels it, and the run is to be stopped.
        Looked at once more when `work` is done: a process killed for its memory may have ended the run
        between two looks."""
        if self.cgroup is None:
            return await work, None
        doing = asyncio.ensure_future(work)
        try:
            while not (await asyncio.wait({doing}, timeout=POLL_SECONDS))[0]:
                if reached := self.reached():
                    return None, reached
        finally:
            if not doing.done():
                doing.cancel()
                await asyncio.gather(doing, return_exceptions=True)
        result = doing.result()
        reached = self.reached()
        return (None, reached) if reached else (result, None)

    def reached(self) -> str | None:
        """What the run is told of the limit it reached, if it reached one."""
        controller = self.cgroup.hit() if self.cgroup is not None else None
        if controller is None or self.amounts is None:
            return None
        metrics.LIMIT_STOPS.labels(metrics.limit_kind(controller)).inc()  # the run stops at its first
        return self.amounts.reached(controller)


@dataclass(frozen=True)
class Limits:
    """The limits of this worker's runs, and how they are kept."""

    amounts: Amounts
    found: cgroups.Cgroups | None  # None: no cgroup, only what prlimit can bound
    why: str | None = None  # why there is no cgroup
    prlimit: tuple[str, ...] = ()  # without cgroups: the argv that sets the rlimits, before the program's

    @property
    def status(self) -> str:
        """What `/status` says of them."""
        if self.found is not None:
            return f"Limits per run: {self.amounts} (cgroup v{self.found.version})"
        said = f"Warning: limits per run are off, as this worker may make no cgroup ({self.why})"
        if not self.prlimit:
            return f"{said}; prlimit (util-linux) is missing too, so nothing limits a run."
        each = f"each of a run's processes may hold {self.amounts.memory_mb:,} MiB of data"
        if os.getuid() == 0:
            return f"{said}: {each}, and processes are not limited (RLIMIT_NPROC binds no root)."
        return f"{said}: {each}, and the service user's processes together are held to {self.amounts.processes:,}."


_current: Limits | None = None


def configure(settings: Settings) -> Limits:
    """This worker's limits, its cgroups tried once; says at start when there are none."""
    global _current
    amounts = Amounts.of(settings, len(os.sched_getaffinity(0)))
    try:
        found = cgroups.find(os.getuid())
        cgroups.sweep(found)
        _prepare(found, amounts)
        _current = Limits(amounts, found)
    except (cgroups.NoCgroups, CannotLimit) as problem:
        _current = Limits(amounts, None, str(problem), _prlimit(amounts))
        log.warning("%s To limit each run as a whole, run the worker as root or in a delegated cgroup "
                    "subtree (docs/sandbox.md, Limits).", _current.status)
    return _current


def current() -> Limits:
    if _current is None:
        raise RuntimeError("the limits are not configured: the worker calls limits.configure(settings)")
    return _current


@asynccontextmanager
async def for_run() -> AsyncIterator[RunLimits]:
    """One run's limits: its cgroup, removed when the block ends; or the rlimits of a worker without
    cgroups; or none in a worker that never configured them (a test of a program alone)."""
    limits = _current
    if limits is None or limits.found is None:
        yield RunLimits(limits.prlimit if limits is not None else ())
        return
    try:
        cgroup = cgroups.RunCgroup(limits.found, limits.amounts.cgroup_files(limits.found.version))
    except OSError as error:
        raise CannotLimit(f"the run's cgroup could not be made: {error}") from None
    try:
        yield RunLimits(tuple(cgroup.joining()), cgroup, limits.amounts)
    finally:
        await cgroup.remove()


def _prepare(found: cgroups.Cgroups, amounts: Amounts) -> None:
    """The CPU limit of all the runs together set, and a process moved into a cgroup made as a run's
    (the kernel may refuse that where the folders could be made)."""
    try:
        cgroups.cap_cpus(found, cpu_quota(amounts.together_cpus))
        cgroup = cgroups.RunCgroup(found, amounts.cgroup_files(found.version))
    except OSError as error:
        raise CannotLimit(f"the runs' cgroups cannot be made: {error}") from None
    try:
        joined = subprocess.run([*cgroup.joining(), "true"], capture_output=True, timeout=30)
    finally:
        cgroups.remove_folders(cgroup.made)
    if joined.returncode != 0:
        raise CannotLimit("a process cannot join a run's cgroup: "
                          + (joined.stderr.decode(errors="replace").strip() or f"exit code {joined.returncode}"))


def _prlimit(amounts: Amounts) -> tuple[str, ...]:
    program = shutil.which("prlimit")
    if program is None:
        return ()
    bounds = [f"--data={amounts.memory_mb << 20}"]
    if os.getuid() != 0:
        bounds.append(f"--nproc={amounts.processes}")
    return (program, *bounds, "--")
