"""The rows the lifecycle reads and changes: listings for commands and cleanup, moves, destruction.

Quick PostgreSQL calls, run as local activities.
"""

from __future__ import annotations

import asyncpg
from temporalio import activity

from activities.contracts import Codebase, Environment
from activities.database import codebase_from_row, environment_from_row
from isolator.settings import Settings
from activities.lifecycle_contracts import (
    EnvironmentListing,
    EnvironmentRef,
    EnvironmentsOfCodebase,
    MarkDestroyedInput,
    MoveConversationInput,
    NamedEnvironmentQuery,
    TrackedEnvironment,
)

# A conversation silent for the stale threshold no longer holds its environment.
# Inactivity counts from the latest message of any attached conversation, or from creation.
_LIST = """
SELECT e.*, c.name AS c_name, c.canonical_path AS c_canonical_path, c.default_branch AS c_default_branch,
       c.host AS c_host, c.repository_url AS c_repository_url, c.id AS c_id,
       count(v.id) FILTER (WHERE v.closed_at IS NULL AND v.last_activity_at > now() - make_interval(days => $2))
           AS live_conversations,
       floor(extract(epoch FROM now() - coalesce(max(v.last_activity_at), e.created_at)) / 86400)::int
           AS days_inactive
FROM isolation_environments e
JOIN codebases c ON c.id = e.codebase_id
LEFT JOIN conversations v ON v.environment_id = e.id
WHERE e.codebase_id = $1 AND e.status = 'active'
GROUP BY e.id, c.id
ORDER BY e.created_at, e.id
"""


class LifecycleRecordActivities:
    def __init__(self, pool: asyncpg.Pool, settings: Settings) -> None:
        self.pool = pool
        self.settings = settings

    @activity.defn
    async def list_environments(self, request: EnvironmentsOfCodebase) -> EnvironmentListing:
        threshold = self.settings.stale_threshold_days
        rows = await self.pool.fetch(_LIST, request.codebase_id, threshold)
        environments = [
            TrackedEnvironment(
                ref=EnvironmentRef(
                    environment_id=str(row["id"]),
                    codebase=codebase_from_row(row, prefix="c_"),
                    working_path=row["working_path"],
                    branch=row["branch_name"],
                    workflow_type=row["workflow_type"],
                    workflow_id=row["workflow_id"],
                    platform=row["created_by_platform"],
                ),
                created_by_platform=row["created_by_platform"],
                live_conversations=row["live_conversations"],
                days_inactive=row["days_inactive"],
                start_commit=(row["metadata"] or {}).get("start_commit"),
            )
            for row in rows
        ]
        return EnvironmentListing(environments, self.settings.max_worktrees_per_codebase, threshold)

    @activity.defn
    async def list_codebases(self) -> list[Codebase]:
        rows = await self.pool.fetch("SELECT * FROM codebases ORDER BY name")
        return [codebase_from_row(row) for row in rows]

    @activity.defn
    async def find_named_environment(self, query: NamedEnvironmentQuery) -> Environment | None:
        """An active environment by `type-id` (`issue-42`, `task-name`) or by branch (`thread-1a2b3c4d`)."""
        row = await self.pool.fetchrow(
            """SELECT * FROM isolation_environments
               WHERE codebase_id = $1 AND status = 'active'
                 AND (branch_name = $2 OR workflow_type || '-' || workflow_id = $2)
               ORDER BY branch_name = $2 DESC LIMIT 1""",
            query.codebase_id, query.name,
        )
        return environment_from_row(row) if row else None

    @activity.defn
    async def move_conversation(self, request: MoveConversationInput) -> None:
        await self.pool.execute(
            "UPDATE conversations SET environment_id = $2, cwd = $3 WHERE id = $1",
            request.conversation_row_id, request.environment_id, request.working_path,
        )

    @activity.defn
    async def mark_environment_destroyed(self, request: MarkDestroyedInput) -> None:
        """The worktree is gone: the row says so and no conversation points at it any more."""
        async with self.pool.acquire() as connection, connection.transaction():
            await connection.execute(
                """UPDATE isolation_environments SET status = 'destroyed', destroyed_at = now()
                   WHERE id = $1 AND status = 'active'""",
                request.environment_id,
            )
            await connection.execute(
                "UPDATE conversations SET environment_id = NULL, cwd = NULL WHERE environment_id = $1",
                request.environment_id,
            )
