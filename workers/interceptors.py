"""Activity interceptors of the worker: liveness heartbeats, and the fault-injection pause of the tests."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from temporalio import activity
from temporalio.worker import (
    ActivityInboundInterceptor,
    ExecuteActivityInput,
    Interceptor,
)

HEARTBEAT_EVERY_SECONDS = 1.0  # the SDK sends at most one per 0.8 x heartbeat timeout


class LivenessHeartbeats(Interceptor):
    """Every normal activity heartbeats while it runs, so a killed worker is noticed within the
    heartbeat timeout of the call (not its whole start-to-close time) and the work moves on."""

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _Heartbeating(next)


class _Heartbeating(ActivityInboundInterceptor):
    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        if activity.info().is_local:  # local activities live and die with their workflow task
            return await self.next.execute_activity(input)
        beating = asyncio.create_task(_beat())
        try:
            return await self.next.execute_activity(input)
        finally:
            beating.cancel()


async def _beat() -> None:
    # Not at once: most activities end within a second, and each heartbeat is a call to the server.
    while True:
        await asyncio.sleep(HEARTBEAT_EVERY_SECONDS)
        activity.heartbeat()


class FaultPause(Interceptor):
    """Test-only: `ISOLATOR_FAULT_PAUSE=<activity>:<before|after>` makes that activity stop there for
    good, after touching the file ISOLATOR_FAULT_MARKER, so that a test can kill the worker at a
    known point. Installed only when the variable is set."""

    def __init__(self, activity_type: str, phase: str, marker: Path) -> None:
        self.activity_type, self.phase, self.marker = activity_type, phase, marker

    @classmethod
    def from_environment(cls) -> "FaultPause | None":
        setting = os.environ.get("ISOLATOR_FAULT_PAUSE")
        if not setting:
            return None
        activity_type, _, phase = setting.partition(":")
        if phase not in ("before", "after") or "ISOLATOR_FAULT_MARKER" not in os.environ:
            raise ValueError("ISOLATOR_FAULT_PAUSE is <activity>:<before|after>, with ISOLATOR_FAULT_MARKER set")
        return cls(activity_type, phase, Path(os.environ["ISOLATOR_FAULT_MARKER"]))

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
        self.fault.marker.write_text(f"{self.fault.activity_type}:{self.fault.phase}\n")
        await asyncio.Event().wait()  # until the test kills this process


def worker_interceptors() -> list[Interceptor]:
    fault = FaultPause.from_environment()
    return [LivenessHeartbeats(), *([fault] if fault else [])]
