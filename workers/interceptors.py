"""Activity interceptors of the worker: liveness heartbeats, and each step's log line (workers/log_format.py)."""

from __future__ import annotations

import asyncio
from typing import Any, Sequence

from temporalio import activity
from temporalio.worker import (
    ActivityInboundInterceptor,
    ExecuteActivityInput,
    Interceptor,
)

from workers.heartbeats import beat
from workers.log_format import StepLines
from workers.metrics_interceptor import Metrics


class LivenessHeartbeats(Interceptor):
    """Every normal activity heartbeats while it runs, so a killed worker is noticed within the
    heartbeat timeout of the call (not its whole start-to-close time) and the work moves on."""

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _Heartbeating(next)


class _Heartbeating(ActivityInboundInterceptor):
    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        if activity.info().is_local:  # local activities live and die with their workflow task
            return await self.next.execute_activity(input)
        beating = asyncio.create_task(beat())
        try:
            return await self.next.execute_activity(input)
        finally:
            beating.cancel()


def worker_interceptors(extra: Sequence[Interceptor] = ()) -> list[Interceptor]:
    """The production interceptors, and any a caller adds (the fault tests add their pause)."""
    return [LivenessHeartbeats(), StepLines(), Metrics(), *extra]
