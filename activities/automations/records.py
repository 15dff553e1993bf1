"""The automations' rows: definitions (made, changed, removed), and each firing with how it ended."""

from __future__ import annotations

import dataclasses
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone

import asyncpg

from isolator.contracts.automation import Automation, FiringEnd, automation_from_json

# An automation whose firings failed this many times in a row pauses itself.
FAILURES_TO_PAUSE = 3


@dataclass(frozen=True)
class StoredAutomation:
    automation: Automation
    codebase_id: str
    paused: bool
    paused_reason: str
    failures_in_a_row: int


def _stored(row: asyncpg.Record) -> StoredAutomation:
    return StoredAutomation(automation_from_json(row["definition"]), str(row["codebase_id"]), row["paused"],
                            row["paused_reason"], row["failures_in_a_row"])


class AutomationRecords:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def save(self, automation: Automation, codebase_id: str) -> bool:
        """Made or changed (its pause is kept); False when nothing changed."""
        definition = dataclasses.asdict(automation)
        changed = await self.pool.fetchval(
            """INSERT INTO automations (name, origin, codebase_id, definition) VALUES ($1, $2, $3, $4::jsonb)
               ON CONFLICT (name) DO UPDATE SET origin = excluded.origin, codebase_id = excluded.codebase_id,
                   definition = excluded.definition, updated_at = now()
               WHERE automations.definition IS DISTINCT FROM excluded.definition
                  OR automations.codebase_id IS DISTINCT FROM excluded.codebase_id
               RETURNING true""",
            automation.name, automation.origin, uuid.UUID(codebase_id), definition)
        return bool(changed)

    async def get(self, name: str) -> StoredAutomation | None:
        row = await self.pool.fetchrow("SELECT * FROM automations WHERE name = $1", name)
        return _stored(row) if row is not None else None

    async def all(self, codebase_id: str | None = None, origin: str | None = None) -> list[StoredAutomation]:
        rows = await self.pool.fetch(
            "SELECT * FROM automations WHERE ($1::uuid IS NULL OR codebase_id = $1) AND ($2::text IS NULL OR origin = $2) "
            "ORDER BY name", uuid.UUID(codebase_id) if codebase_id else None, origin)
        return [_stored(row) for row in rows]

    async def unpaused_on(self, platform: str) -> list[StoredAutomation]:
        """The automations, not paused, that name an event of `platform` (`slack`)."""
        rows = await self.pool.fetch(
            """SELECT * FROM automations WHERE NOT paused AND definition->'triggers' @> $1::jsonb ORDER BY name""",
            [{"platform": platform}])
        return [_stored(row) for row in rows]

    async def delete(self, name: str) -> bool:
        return await self.pool.fetchval("DELETE FROM automations WHERE name = $1 RETURNING true", name) is not None

    async def set_paused(self, name: str, paused: bool, reason: str = "") -> bool:
        return await self.pool.fetchval(
            "UPDATE automations SET paused = $2, paused_reason = $3, failures_in_a_row = CASE WHEN $2 THEN "
            "failures_in_a_row ELSE 0 END, updated_at = now() WHERE name = $1 RETURNING true",
            name, paused, reason if paused else "") is not None

    async def start_firing(self, workflow_id: str, name: str, trigger: str, conversation_id: str,
                           report_platform: str, report_conversation: str) -> None:
        await self.pool.execute(
            """INSERT INTO automation_firings (workflow_id, automation, trigger, conversation_id, report_platform,
                   report_conversation) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (workflow_id) DO NOTHING""",
            workflow_id, name, trigger, conversation_id, report_platform, report_conversation)

    async def set_firing_run(self, workflow_id: str, run_id: str) -> None:
        await self.pool.execute("UPDATE automation_firings SET run_id = $2 WHERE workflow_id = $1",
                                workflow_id, uuid.UUID(run_id))

    async def finish_firing(self, workflow_id: str, name: str, end: FiringEnd) -> bool:
        """Records the end once; True when this failure paused the automation (said once by the caller)."""
        async with self.pool.acquire() as connection, connection.transaction():
            finished = await connection.fetchval(
                """UPDATE automation_firings SET state = $2, summary = $3, cost_usd = $4, pull_request_url = $5,
                       finished_at = now() WHERE workflow_id = $1 AND finished_at IS NULL RETURNING true""",
                workflow_id, end.state, end.summary[:2000], end.cost_usd, end.pull_request_url)
            if not finished:
                return False
            if end.state != "failed":
                await connection.execute("UPDATE automations SET failures_in_a_row = 0 WHERE name = $1", name)
                return False
            row = await connection.fetchrow(
                "UPDATE automations SET failures_in_a_row = failures_in_a_row + 1 WHERE name = $1 "
                "RETURNING failures_in_a_row, paused", name)
            if row is None or row["paused"] or row["failures_in_a_row"] < FAILURES_TO_PAUSE:
                return False
            await connection.execute(
                "UPDATE automations SET paused = true, paused_reason = $2 WHERE name = $1",
                name, f"its last {FAILURES_TO_PAUSE} firings failed")
            return True

    async def spent_today(self, name: str) -> float:
        start = datetime.now(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
        return float(await self.pool.fetchval(
            "SELECT coalesce(sum(cost_usd), 0) FROM automation_firings WHERE automation = $1 AND started_at >= $2",
            name, start))

    async def firings(self, name: str, limit: int = 10) -> list[asyncpg.Record]:
        return await self.pool.fetch(
            "SELECT * FROM automation_firings WHERE automation = $1 ORDER BY started_at DESC LIMIT $2", name, limit)
