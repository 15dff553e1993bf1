"""The agent session of each conversation, in PostgreSQL (`agent_sessions`), and what runs cost.

A conversation has at most one current session. Its next run resumes it when it runs the same
driver in the same environment; otherwise (the first run, another worktree, another agent) a new
session replaces it. `/reset` deletes it. A row outlives any process, so a session survives a
restart, hibernation and a restore (the environment keeps its id).
"""

from __future__ import annotations

import uuid
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta, timezone
from typing import Literal

import asyncpg

from activities.runs.agents.base import Usage


@dataclass
class Session:
    id: str  # ours: the name of its folder
    agent_session_id: str | None  # the agent's own id to resume; None: a new session
    turns: int
    cost_usd: float
    tokens: int
    started_at: datetime
    agent_usage: dict  # what the agent last reported for its whole thread (Codex counts per thread)
    driver: str = ""
    # why a new one started: None (resumed, or the conversation's first), "moved" (another worktree),
    # "agent" (another driver)
    renewed: Literal["moved", "agent"] | None = None


class AgentSessions:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def for_run(self, platform: str, conversation_id: str, driver: str, environment_id: str) -> Session:
        """The session the conversation's run resumes, or a new one recorded in its place."""
        row = await self.pool.fetchrow(
            "SELECT * FROM agent_sessions WHERE platform = $1 AND conversation_id = $2", platform, conversation_id)
        if row is not None and row["driver"] == driver and str(row["environment_id"]) == environment_id:
            return _session(row)
        if row is not None and row["driver"] == driver and await self._restored_from(environment_id,
                                                                                      row["environment_id"]):
            # The conversation's own worktree, removed and restored: the same work, the same session.
            moved = await self.pool.fetchrow(
                """UPDATE agent_sessions SET environment_id = $3 WHERE platform = $1 AND conversation_id = $2
                   RETURNING *""", platform, conversation_id, uuid.UUID(environment_id))
            return _session(moved)
        renewed = None if row is None else "agent" if row["driver"] != driver else "moved"
        session = await self.start(platform, conversation_id, driver, environment_id)
        session.renewed = renewed
        return session

    async def _restored_from(self, environment_id: str, earlier: uuid.UUID) -> bool:
        """Whether `environment_id` is a restore (or a restore of a restore) of `earlier`."""
        return bool(await self.pool.fetchval(
            """WITH RECURSIVE restores(id, depth) AS (
                   SELECT (metadata->>'restored_from')::uuid, 1 FROM isolation_environments WHERE id = $1
                   UNION ALL
                   SELECT (e.metadata->>'restored_from')::uuid, r.depth + 1
                   FROM isolation_environments e JOIN restores r ON e.id = r.id WHERE r.depth < 100)
               SELECT EXISTS (SELECT 1 FROM restores WHERE id = $2)""",
            uuid.UUID(environment_id), earlier))

    async def start(self, platform: str, conversation_id: str, driver: str, environment_id: str) -> Session:
        row = await self.pool.fetchrow(
            """INSERT INTO agent_sessions (platform, conversation_id, id, driver, environment_id)
               VALUES ($1, $2, $3, $4, $5)
               ON CONFLICT (platform, conversation_id) DO UPDATE SET
                   id = EXCLUDED.id, driver = EXCLUDED.driver, environment_id = EXCLUDED.environment_id,
                   agent_session_id = NULL, turns = 0, cost_usd = 0, tokens = 0, agent_usage = '{}',
                   started_at = now(), last_run_at = NULL
               RETURNING *""",
            platform, conversation_id, uuid.uuid4(), driver, uuid.UUID(environment_id))
        return _session(row)

    async def ran(self, platform: str, conversation_id: str, session: Session, agent_session_id: str | None,
                  usage: Usage, thread_usage: Usage | None = None) -> None:
        """A turn ended: the agent's id kept (once it gave one), its cost added."""
        await self.pool.execute(
            """UPDATE agent_sessions SET agent_session_id = coalesce($4, agent_session_id), turns = turns + 1,
                      cost_usd = cost_usd + $5, tokens = tokens + $6, last_run_at = now(),
                      agent_usage = coalesce($7, agent_usage)
               WHERE platform = $1 AND conversation_id = $2 AND id = $3""",
            platform, conversation_id, uuid.UUID(session.id), agent_session_id, usage.cost_usd or 0.0,
            usage.total_tokens, asdict(thread_usage) if thread_usage is not None else None)

    async def reset(self, platform: str, conversation_id: str) -> Session | None:
        row = await self.pool.fetchrow(
            "DELETE FROM agent_sessions WHERE platform = $1 AND conversation_id = $2 RETURNING *",
            platform, conversation_id)
        return _session(row) if row is not None else None

    async def current(self, platform: str, conversation_id: str) -> Session | None:
        row = await self.pool.fetchrow(
            "SELECT * FROM agent_sessions WHERE platform = $1 AND conversation_id = $2", platform, conversation_id)
        return _session(row) if row is not None else None

    async def spent_today(self, codebase_id: str) -> float:
        """USD the codebase's runs cost since midnight UTC."""
        return float(await self.pool.fetchval(
            """SELECT coalesce(sum(r.cost_usd), 0) FROM agent_runs r
               JOIN isolation_environments e ON e.id = r.environment_id
               WHERE e.codebase_id = $1 AND r.started_at >= $2""",
            uuid.UUID(codebase_id), today_utc()))


def today_utc() -> datetime:
    return datetime.now(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)


def renews_in(now: datetime | None = None) -> timedelta:
    now = now or datetime.now(timezone.utc)
    return today_utc() + timedelta(days=1) - now


def _session(row: asyncpg.Record) -> Session:
    return Session(str(row["id"]), row["agent_session_id"], row["turns"], float(row["cost_usd"]), row["tokens"],
                   row["started_at"], dict(row["agent_usage"] or {}), driver=row["driver"])
