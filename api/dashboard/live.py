"""A run's page kept live: server-sent events pushed when PostgreSQL announces that the run changed.

The worker writes a run's output and log in small batches (activities/runs/records.py) and each write
notifies RUN_CHANNEL with the run's id; one LISTEN connection per API process wakes the streams of
that run, which read only what is new (from the character offsets they already sent). Nothing is
polled but a slow safety check, in case a notification was lost with a dropped connection.

The log is sent a whole line at a time while the run goes on, so that each of an agent's JSON events
(a line) arrives whole, read into transcript entries (api/dashboard/transcript.py); at the end, the
rest. A change of the run's state (started, ended) sends its facts, which the page shows in place.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import defaultdict
from typing import Any, AsyncIterator, Awaitable, Callable

import asyncpg

from activities.runs.records import RUN_CHANNEL
from api.dashboard.transcript import events_in

log = logging.getLogger(__name__)

SAFETY_SECONDS = 15.0  # a stream re-reads its run this often without a notification, and says it is alive
FINAL = ("done", "failed", "timed_out", "stopped", "interrupted", "dropped", "waiting")


class RunListener:
    """One LISTEN connection, started with the first stream; each stream waits on its own event."""

    def __init__(self, database_url: str) -> None:
        self.database_url = database_url
        self.connection: asyncpg.Connection | None = None
        self.waiting: dict[str, set[asyncio.Event]] = defaultdict(set)
        self.lock = asyncio.Lock()

    async def _listen(self) -> None:
        async with self.lock:
            if self.connection is not None and not self.connection.is_closed():
                return
            self.connection = await asyncpg.connect(self.database_url)
            await self.connection.add_listener(RUN_CHANNEL, self._notified)

    def _notified(self, connection: object, pid: int, channel: str, run_id: str) -> None:
        for event in self.waiting.get(run_id, ()):
            event.set()

    async def close(self) -> None:
        if self.connection is not None:
            await self.connection.close()

    async def events(self, pool: asyncpg.Pool, run_id: str, output_at: int, log_at: int, worktree: str | None,
                     facts: Callable[[], Awaitable[dict[str, Any]]]) -> AsyncIterator[str]:
        """The run's new output, log and transcript entries as SSE events, from the offsets given, until
        it is final; its `facts` with each change of its state, the last one final."""
        changed = asyncio.Event()
        self.waiting[run_id].add(changed)
        said = ""  # the state last sent
        try:
            await self._listen()  # before the first read: nothing written in between is missed
            while True:
                changed.clear()
                row = await pool.fetchrow(
                    "SELECT substr(output, $2 + 1) AS output, substr(log, $3 + 1) AS log, status "
                    "FROM agent_runs WHERE id = $1", run_id, output_at, log_at)
                if row is None:
                    return
                final = row["status"] in FINAL
                new_log = row["log"] if final else row["log"][:row["log"].rfind("\n") + 1]
                output_at += len(row["output"])
                log_at += len(new_log)
                event_id = f"id: {output_at},{log_at}\n"
                if row["output"]:
                    yield f"event: output\n{event_id}data: {json.dumps(row['output'])}\n\n"
                if new_log:
                    yield f"event: log\n{event_id}data: {json.dumps(new_log)}\n\n"
                    entries = [entry.as_json() for entry in events_in(new_log, worktree)]
                    if entries:
                        yield f"event: entries\n{event_id}data: {json.dumps(entries)}\n\n"
                if final:
                    yield f"event: final\n{event_id}data: {json.dumps(await facts())}\n\n"
                    return
                if row["status"] != said:
                    yield f"event: status\n{event_id}data: {json.dumps(await facts())}\n\n"
                    said = row["status"]
                try:
                    await asyncio.wait_for(changed.wait(), SAFETY_SECONDS)
                except TimeoutError:
                    yield ": alive\n\n"  # a comment: keeps proxies from closing a quiet stream
        finally:
            self.waiting[run_id].discard(changed)
            if not self.waiting[run_id]:
                del self.waiting[run_id]


def offsets(last_event_id: str | None, output_at: int, log_at: int) -> tuple[int, int]:
    """Where a stream starts: a reconnecting browser's Last-Event-ID wins over the page's offsets."""
    if last_event_id:
        first, _, second = last_event_id.partition(",")
        if first.isdigit() and second.isdigit():
            return int(first), int(second)
    return output_at, log_at
