"""Whether a codebase's host answers, for a message that would wait on it (workflows/host_wait.py).

`host_answers` runs on the host's own queue and does nothing: the workflow asks it with a short
schedule-to-start timeout, so a host with no worker is known within seconds, and the step does not stay
on the queue. `host_seen` runs on the shared queue (a local activity) and reads the host's liveness from
its workers' rows (activities/hosts/liveness.py): a worker that starts records itself at once.
"""

from __future__ import annotations

import asyncpg
from temporalio import activity

from activities.hosts.liveness import liveness_of
from isolator.contracts.host_wait import HostSeen


class HostAnswerActivities:
    """On each host's queue."""

    def __init__(self, host: str) -> None:
        self.host = host

    @activity.defn
    async def host_answers(self) -> str:
        return self.host


class HostSeenActivities:
    """On the shared queue."""

    def __init__(self, pool: asyncpg.Pool, wait_hours: float) -> None:
        self.pool = pool
        self.wait_hours = wait_hours

    @activity.defn
    async def host_seen(self, host: str) -> HostSeen:
        liveness = await liveness_of(self.pool, host)
        return HostSeen(host, liveness.alive, liveness.last_seen_text, self.wait_hours)
