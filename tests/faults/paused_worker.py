"""The worker process of the fault tests: `isolator worker`, plus a pause at a chosen activity.

Run as `python -m tests.faults.paused_worker`. `ISOLATOR_FAULT_PAUSE=<activity>:<before|after>` makes
that activity stop there, after touching the file ISOLATOR_FAULT_MARKER, so that a test can kill the
worker (or another process) at a known point: for good, or, with ISOLATOR_FAULT_RELEASE, until that
file exists. `ISOLATOR_FAULT_PAUSE=archive:after` stops a removal inside its activity, once the
worktree is archived and before it is removed. Without the variable it is `isolator worker` as it
ships: the pause lives here, never in the production path.
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import Any

from temporalio import activity
from temporalio.worker import (
    ActivityInboundInterceptor,
    ExecuteActivityInput,
    Interceptor,
)

from isolator import tracing
from isolator.settings import load_settings
from workers.log_format import configure_logging
from workers.processes import run_worker


class FaultPause(Interceptor):
    """`ISOLATOR_FAULT_PAUSE=<activity>:<before|after>` makes that activity stop there for
    good, after touching the file ISOLATOR_FAULT_MARKER, so that a test can kill the worker at a
    known point."""

    def __init__(self, activity_type: str, phase: str, marker: Path, release: Path | None = None) -> None:
        self.activity_type, self.phase, self.marker, self.release = activity_type, phase, marker, release

    @classmethod
    def from_environment(cls) -> "FaultPause | None":
        setting = os.environ.get("ISOLATOR_FAULT_PAUSE")
        if not setting:
            return None
        activity_type, _, phase = setting.partition(":")
        if phase not in ("before", "after") or "ISOLATOR_FAULT_MARKER" not in os.environ:
            raise ValueError("ISOLATOR_FAULT_PAUSE is <activity>:<before|after>, with ISOLATOR_FAULT_MARKER set")
        release = os.environ.get("ISOLATOR_FAULT_RELEASE")
        return cls(activity_type, phase, Path(os.environ["ISOLATOR_FAULT_MARKER"]), Path(release) if release else None)

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _Pausing(next, self)


class _Pausing(ActivityInboundInterceptor):
    def __init__(self, next: ActivityInboundInterceptor, fault: FaultPause) -> None:
        super().__init__(next)
        self.fault = fault

    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        chosen = activity.info().activity_type == self.fault.activity_type
        if chosen and self.fault.phase == "before":
            await self._stop_here()
        result = await self.next.execute_activity(input)
        if chosen and self.fault.phase == "after":
            await self._stop_here()
        return result

    async def _stop_here(self) -> None:
        release = self.fault.release
        if release is not None and release.exists():
            return  # released: later attempts go through
        self.fault.marker.write_text(f"{self.fault.activity_type}:{self.fault.phase}\n")
        if release is None:
            await asyncio.Event().wait()  # until the test kills this process
        while not release.exists():
            await asyncio.sleep(0.05)


def pause_after_archiving(fault: FaultPause) -> None:
    """The removal stops between its two steps: the archive saved, the worktree not yet removed."""
    from activities.providers.worktree import removal

    save_archive = removal.save_archive

    async def saved_then_stopped(*args: Any, **kwargs: Any) -> Any:
        archive = await save_archive(*args, **kwargs)
        await _Pausing(None, fault)._stop_here()  # type: ignore[arg-type]
        return archive

    removal.save_archive = saved_then_stopped  # type: ignore[assignment]


def pause_in_warm_work(fault: FaultPause) -> None:
    """`warm_claim`: a claim stops with its warm worktree moved into place, before git knows and before
    its branch is made. `warm_refill`: a refill stops with a new warm worktree made, before its set-up."""
    from activities.providers.worktree.warm import WarmDisk

    if fault.activity_type == "warm_claim":
        claim_into = WarmDisk.claim_into

        async def moved_then_stopped(self: WarmDisk, warm: Path, target: Path, *args: Any) -> None:
            if warm.is_dir() and not target.exists():
                target.parent.mkdir(parents=True, exist_ok=True)
                os.rename(warm, target)
                await _Pausing(None, fault)._stop_here()  # type: ignore[arg-type]
            await claim_into(self, warm, target, *args)

        WarmDisk.claim_into = moved_then_stopped  # type: ignore[method-assign]
    else:
        set_up = WarmDisk.set_up

        async def stopped_before_set_up(self: WarmDisk, *args: Any) -> str | None:
            await _Pausing(None, fault)._stop_here()  # type: ignore[arg-type]
            return await set_up(self, *args)

        WarmDisk.set_up = stopped_before_set_up  # type: ignore[method-assign]


def main() -> None:
    settings = load_settings()
    configure_logging(settings.log_format, logging.INFO, settings.host)  # as `isolator worker` (workers/cli.py)
    tracing.start_tracing("isolator-worker")
    fault = FaultPause.from_environment()
    if fault is not None and fault.activity_type == "archive":
        pause_after_archiving(fault)
        fault = None
    elif fault is not None and fault.activity_type in ("warm_claim", "warm_refill"):
        pause_in_warm_work(fault)
        fault = None
    asyncio.run(run_worker(settings, interceptors=[fault] if fault else []))


if __name__ == "__main__":
    main()
