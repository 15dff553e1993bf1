"""The liveness heartbeats of a running activity (workers/interceptors.py), and how late they come.

A heartbeat is an asyncio task of the worker's event loop: anything that holds the loop (a run's own
output handling, above all) delays it, and a run whose heartbeats stop for its heartbeat timeout is
taken for one whose worker died. So each beat notes how long it waited past its second: a wait of
LATE_SECONDS is logged, and the longest is kept for the tests and the bench (bench/failover.py) that
set the agent run's heartbeat timeout from it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass

from temporalio import activity

log = logging.getLogger(__name__)

HEARTBEAT_EVERY_SECONDS = 1.0  # the SDK sends at most one per 0.8 x heartbeat timeout
LATE_SECONDS = 3.0


@dataclass
class Lateness:
    """This process's beats since `reset`: the longest gap between two, in seconds, and how many were late."""

    longest: float = 0.0
    late: int = 0
    beats: int = 0

    def reset(self) -> None:
        self.longest, self.late, self.beats = 0.0, 0, 0


LATENESS = Lateness()


async def beat() -> None:
    """Heartbeats every HEARTBEAT_EVERY_SECONDS until cancelled. Not at once: most activities end within a
    second, and each heartbeat is a call to the server."""
    last = time.monotonic()
    while True:
        await asyncio.sleep(HEARTBEAT_EVERY_SECONDS)
        now = time.monotonic()
        gap, last = now - last, now
        LATENESS.beats += 1
        LATENESS.longest = max(LATENESS.longest, gap)
        if gap >= LATE_SECONDS:
            LATENESS.late += 1
            log.warning("heartbeat of %s came %.1f s after the one before: this worker's event loop was held",
                        activity.info().activity_type, gap)
        activity.heartbeat()
