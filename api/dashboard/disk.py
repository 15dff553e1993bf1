"""Disk use as the dashboard shows it. The scheduled cleanup measures every worktree and records it;
the environment page measures its own worktree when it is opened, as chat's `/status` does (within a
time limit), and records it too. The overview and codebase pages read what was recorded, and say when
the worktrees not measured yet will be: at the next scheduled cleanup."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import asyncpg
from temporalio.client import Client
from temporalio.service import RPCError

from activities.git.disk_usage import disk_usage
from isolator.settings import Settings
from isolator.contracts.cleanup import SCHEDULE_ID

MEASURE_SECONDS = 2.0  # what `/worktree why` allows itself: the page never waits on a huge tree longer


@dataclass
class Measured:
    size: int
    complete: bool  # False: the count stopped at MEASURE_SECONDS, so the worktree takes at least `size`


async def measure_worktree(pool: asyncpg.Pool, settings: Settings, environment_id: uuid.UUID) -> Measured | None:
    """The active worktree's disk use, counted now and recorded (when the count finished); None when its
    folder is not on this machine (its codebase is on another host) or gone."""
    row = await pool.fetchrow(
        """SELECT e.working_path, c.host FROM isolation_environments e JOIN codebases c ON c.id = e.codebase_id
           WHERE e.id = $1 AND e.status = 'active'""", environment_id)
    if row is None or row["host"] != settings.host or not Path(row["working_path"]).is_dir():
        return None
    size, complete = await asyncio.to_thread(disk_usage, Path(row["working_path"]), MEASURE_SECONDS)
    if complete:  # a count cut short is a lower bound: the cleanup's full count stays until the next
        await pool.execute("UPDATE isolation_environments SET disk_bytes = $2, disk_measured_at = now()"
                           " WHERE id = $1 AND status = 'active'", environment_id, size)
    return Measured(size, complete)


async def next_cleanup(client: Client) -> datetime | None:
    """When the scheduled cleanup runs next (and measures every worktree); None when there is no schedule."""
    try:
        description = await client.get_schedule_handle(SCHEDULE_ID).describe()
    except RPCError:
        return None
    times = description.info.next_action_times
    return times[0] if times else None
