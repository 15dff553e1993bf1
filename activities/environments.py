"""Isolation-environment rows: quick PostgreSQL calls, run as local activities."""

from __future__ import annotations

import asyncpg
from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.contracts import (
    WORKTREE_CONFLICT,
    Attached,
    AttachInput,
    Environment,
    IdentityQuery,
    RecordedEnvironment,
    RecordEnvironmentInput,
    RetireInput,
    Retired,
)
from activities.database import environment_from_row
from activities.lifecycle_contracts import LIMIT_REACHED, EnvironmentCount, EnvironmentsOfCodebase

_COUNT_ACTIVE = "SELECT count(*) FROM isolation_environments WHERE codebase_id = $1 AND status = 'active'"
_BY_IDENTITY = """SELECT * FROM isolation_environments
                  WHERE codebase_id = $1 AND workflow_type = $2 AND workflow_id = $3 AND status = 'active'"""
# A change, or the same attachment by the same message again: a retry after a crash that lost the
# first answer must still tell the user.
_ATTACH = """UPDATE conversations SET environment_id = $2, cwd = $3, attached_by = $4
             WHERE id = $1 AND (environment_id IS DISTINCT FROM $2 OR attached_by = $4)
             RETURNING id"""


class EnvironmentActivities:
    def __init__(self, pool: asyncpg.Pool, limit: int) -> None:
        self.pool = pool
        self.limit = limit  # MAX_WORKTREES_PER_CODEBASE

    @activity.defn
    async def find_environment_by_identity(self, query: IdentityQuery) -> Environment | None:
        row = await self.pool.fetchrow(_BY_IDENTITY, query.codebase_id, query.workflow_type, query.workflow_id)
        return environment_from_row(row) if row else None

    @activity.defn
    async def retire_environment(self, retire: RetireInput) -> Retired:
        """Mark an environment whose worktree is gone as destroyed and clear the conversation's reference."""
        async with self.pool.acquire() as connection, connection.transaction():
            marked = await connection.fetchval(
                """UPDATE isolation_environments SET status = 'destroyed', destroyed_at = now()
                   WHERE id = $1 AND status = 'active' RETURNING id""",
                retire.environment_id,
            )
            await connection.execute(
                "UPDATE conversations SET environment_id = NULL, cwd = NULL WHERE id = $1 AND environment_id = $2",
                retire.conversation_row_id, retire.environment_id,
            )
        return Retired(marked_now=marked is not None)

    @activity.defn
    async def attach_conversation(self, attach: AttachInput) -> Attached:
        changed = await self.pool.fetchval(
            _ATTACH, attach.conversation_row_id, attach.environment_id, attach.cwd, attach.key
        )
        return Attached(changed=changed is not None)

    @activity.defn
    async def record_environment(self, record: RecordEnvironmentInput) -> RecordedEnvironment:
        """Insert the environment (or find the one a concurrent message inserted) and attach the conversation.

        The codebase row is locked while counting, so concurrent messages cannot pass the limit together.
        """
        async with self.pool.acquire() as connection, connection.transaction():
            await connection.execute("SELECT 1 FROM codebases WHERE id = $1 FOR UPDATE", record.codebase_id)
            row = await connection.fetchrow(_BY_IDENTITY, record.codebase_id, record.workflow_type, record.workflow_id)
            created = row is None
            if created:
                if record.counts_against_limit:
                    await self._check_room(connection, record.codebase_id)
                row = await self._insert(connection, record)
            elif record.key is not None and (row["metadata"] or {}).get("recorded_by") == record.key:
                created = True  # this message's own row, from an attempt whose answer was lost
            environment = environment_from_row(row)
            changed = await connection.fetchval(
                _ATTACH, record.conversation_row_id, environment.id, environment.working_path, record.key
            )
        return RecordedEnvironment(environment=environment, created=created, attachment_changed=changed is not None)

    @activity.defn
    async def count_environments(self, request: EnvironmentsOfCodebase) -> EnvironmentCount:
        """Whether a new worktree fits: a count, where a listing would carry every environment."""
        return EnvironmentCount(await self.pool.fetchval(_COUNT_ACTIVE, request.codebase_id), self.limit)

    async def _check_room(self, connection: asyncpg.Connection, codebase_id: str) -> None:
        active = await connection.fetchval(_COUNT_ACTIVE, codebase_id)
        if active >= self.limit:
            raise ApplicationError(f"{active}/{self.limit} worktrees", type=LIMIT_REACHED, non_retryable=True)

    async def _insert(self, connection: asyncpg.Connection, record: RecordEnvironmentInput) -> asyncpg.Record:
        try:
            return await connection.fetchrow(
                """INSERT INTO isolation_environments
                       (codebase_id, workflow_type, workflow_id, working_path, branch_name,
                        created_by_platform, metadata)
                   VALUES ($1, $2, $3, $4, $5, $6, $7)
                   RETURNING *""",
                record.codebase_id, record.workflow_type, record.workflow_id, record.working_path,
                record.branch_name, record.platform,
                {**record.metadata, **({"recorded_by": record.key} if record.key else {})},
            )
        except asyncpg.UniqueViolationError:
            raise ApplicationError(
                f"`{record.working_path}` is already recorded for another piece of work.",
                type=WORKTREE_CONFLICT,
                non_retryable=True,
            ) from None
