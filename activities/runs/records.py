"""The `agent_runs` rows: a run queued, started, written to and finished.

A run's answer (standard output) and log (standard error) are appended as they arrive, so that
`GET /api/runs/{id}/log` shows a run in progress; each keeps at most CAP bytes, with a note where it
was cut. A database that is briefly away slows the agent down (its output waits) and loses nothing.
Every change of a run is announced on the PostgreSQL channel RUN_CHANNEL (payload: the run's id), in
the same statement, so the dashboard's run page is pushed new lines as soon as they are written.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Literal

import asyncpg

from activities.runs.agents.base import Usage
from isolator.contracts.agent import RunStatus

log = logging.getLogger(__name__)

CAP = 10 * 1024 * 1024  # bytes kept of a run's output, and of its log
FLUSH_AT = 256 * 1024  # pending bytes written at once, not at the next tick
FLUSH_SECONDS = 0.25  # a line reaches the record, and the dashboard, this long after it is printed at most
RUN_CHANNEL = "agent_run"
RETRY_SECONDS = 1.0
Column = Literal["output", "log"]
# What a database that is restarting raises; anything else is a bug and is raised.
_UNREACHABLE = (OSError, asyncpg.PostgresConnectionError, asyncpg.CannotConnectNowError,
                asyncpg.InterfaceError, asyncpg.AdminShutdownError)


class RunRecords:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def queued(self, run_id: str, environment_id: str, platform: str, conversation_id: str,
                     message: str, trace_id: str | None = None) -> None:
        await self.pool.execute(
            """INSERT INTO agent_runs (id, environment_id, platform, conversation_id, message, trace_id)
               VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING""",
            run_id, environment_id, platform, conversation_id, message, trace_id,
        )

    async def started(self, run_id: str) -> None:
        await _patiently(self.pool.execute, _announced(
                         "UPDATE agent_runs SET status = 'running', started_at = now() WHERE id = $1"), run_id)

    async def append(self, run_id: str, column: Column, text: str, cut: bool) -> None:
        # `column` is one of two names of ours, never input.
        await _patiently(self.pool.execute, _announced(
                         f"UPDATE agent_runs SET {column} = {column} || $2, {column}_cut = {column}_cut OR $3 "
                         "WHERE id = $1"), run_id, text, cut)

    async def finished(self, run_id: str, status: RunStatus, exit_code: int | None,
                       changed_files: list[str], commits: int | None, diff: str = "") -> bool:
        """The run's end; a run already finished (an interruption recorded late) is left as it is, and
        the answer is False."""
        updated = await _patiently(
            self.pool.execute,
            _announced("""UPDATE agent_runs SET status = $2, exit_code = $3, changed_files = $4, commits = $5,
                                     diff = $6, finished_at = now()
               WHERE id = $1 AND status IN ('queued', 'running')"""),
            run_id, status, exit_code, changed_files, commits, diff,
        )
        return _changed(updated)

    async def wait_ended(self, run_id: str) -> None:
        """A run that waited for a person's answer and ended without going on (`/stop`, a budget's Stop or
        its timeout): stopped. One that goes on does so as another run, and this one stays `waiting`."""
        await _patiently(self.pool.execute, _announced(
                         "UPDATE agent_runs SET status = 'stopped' WHERE id = $1 AND status = 'waiting'"), run_id)

    async def usage(self, run_id: str, driver: str, session_id: str | None, usage: Usage) -> None:
        """What the run's agent reported it used, and the session it ran in."""
        await _patiently(
            self.pool.execute,
            """UPDATE agent_runs SET driver = $2, session_id = $3, cost_usd = $4, input_tokens = $5,
                                     output_tokens = $6, cache_read_tokens = $7, cache_write_tokens = $8
               WHERE id = $1""",
            run_id, driver, session_id, usage.cost_usd, usage.input_tokens, usage.output_tokens,
            usage.cache_read_tokens, usage.cache_write_tokens,
        )

    async def dropped(self, run_ids: list[str]) -> None:
        await self.pool.execute(
            _announced("UPDATE agent_runs SET status = 'dropped', finished_at = now() "
                       "WHERE id = ANY($1::uuid[]) AND status = 'queued'"),
            run_ids,
        )


def _announced(update: str) -> str:
    """The update, and a notification on RUN_CHANNEL for each run it changed (sent at its commit)."""
    return f"WITH changed AS ({update} RETURNING id) SELECT pg_notify('{RUN_CHANNEL}', id::text) FROM changed"


def _changed(status: object) -> bool:
    """Whether an announced update changed a row: its status is the SELECT's ("SELECT 0" for none), not
    an UPDATE's."""
    return str(status).rsplit(" ", 1)[-1] != "0"


async def _patiently(call, *args: object) -> object:  # type: ignore[no-untyped-def]
    """Through a database restart: tried again every second until it answers (the run's own time
    limit bounds the wait)."""
    while True:
        try:
            return await call(*args)
        except _UNREACHABLE as error:
            log.warning("database unreachable while recording a run (%s); trying again", error)
            await asyncio.sleep(RETRY_SECONDS)


class Capture:
    """One stream of a run into its column: appended in batches, at most CAP bytes kept."""

    def __init__(self, records: RunRecords, run_id: str, column: Column) -> None:
        self.records, self.run_id, self.column = records, run_id, column
        self.pending: list[str] = []
        self.pending_bytes = 0
        self.kept = 0
        self.cut = False
        self.dropped = 0  # bytes past the cap
        # The write in flight. Once begun it is finished even when the flush that began it is
        # cancelled (the flusher stopped at the run's end): the text is no longer pending anywhere else.
        self.writing: asyncio.Future[None] | None = None

    async def add(self, text: str) -> None:
        if self.cut:
            self.dropped += len(text.encode())
            return
        data = text.encode()
        room = CAP - self.kept - self.pending_bytes
        if len(data) > room:
            text = data[:room].decode(errors="ignore") + f"\n[… cut here: {self.column} past 10 MiB is not kept]\n"
            self.dropped += len(data) - room
            self.cut = True
        self.pending.append(text)
        self.pending_bytes += len(text.encode())
        if self.pending_bytes >= FLUSH_AT:
            await self.flush()

    async def flush(self) -> None:
        """Write what is pending, after any write still in flight, so the text stays in order."""
        while self.writing is not None and not self.writing.done():  # another flush may begin one meanwhile
            await asyncio.shield(self.writing)
        if not self.pending:
            return
        text = "".join(self.pending)
        self.kept += self.pending_bytes  # counted now: what arrives while this is written finds less room
        self.pending, self.pending_bytes = [], 0
        self.writing = asyncio.ensure_future(self.records.append(self.run_id, self.column, text, self.cut))
        await asyncio.shield(self.writing)
