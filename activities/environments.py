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

_ATTACH = """UPDATE conversations SET environment_id = $2, cwd = $3
             WHERE id = $1 AND environment_id IS DISTINCT FROM $2
             RETURNING id"""


class EnvironmentActivities:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    @activity.defn
    async def find_environment_by_identity(self, query: IdentityQuery) -> Environment | None:
        row = await self.pool.fetchrow(
            """SELECT * FROM isolation_environments
               WHERE codebase_id = $1 AND workflow_type = $2 AND workflow_id = $3 AND status = 'active'""",
            query.codebase_id, query.workflow_type, query.workflow_id,
        )
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
        changed = await self.pool.fetchval(_ATTACH, attach.conversation_row_id, attach.environment_id, attach.cwd)
        return Attached(changed=changed is not None)

    @activity.defn
    async def record_environment(self, record: RecordEnvironmentInput) -> RecordedEnvironment:
        """Insert the environment (or find the one a concurrent message inserted) and attach the conversation."""
        async with self.pool.acquire() as connection, connection.transaction():
            try:
                row = await connection.fetchrow(
                    """INSERT INTO isolation_environments
                           (codebase_id, workflow_type, workflow_id, working_path, branch_name,
                            created_by_platform, metadata)
                       VALUES ($1, $2, $3, $4, $5, $6, $7)
                       ON CONFLICT (codebase_id, workflow_type, workflow_id) WHERE status = 'active'
                       DO NOTHING
                       RETURNING *""",
                    record.codebase_id, record.workflow_type, record.workflow_id, record.working_path,
                    record.branch_name, record.platform, record.metadata,
                )
            except asyncpg.UniqueViolationError:
                raise ApplicationError(
                    f"`{record.working_path}` is already recorded for another piece of work.",
                    type=WORKTREE_CONFLICT,
                    non_retryable=True,
                ) from None
            created = row is not None
            if not created:
                row = await connection.fetchrow(
                    """SELECT * FROM isolation_environments
                       WHERE codebase_id = $1 AND workflow_type = $2 AND workflow_id = $3 AND status = 'active'""",
                    record.codebase_id, record.workflow_type, record.workflow_id,
                )
            environment = environment_from_row(row)
            changed = await connection.fetchval(
                _ATTACH, record.conversation_row_id, environment.id, environment.working_path
            )
        return RecordedEnvironment(environment=environment, created=created, attachment_changed=changed is not None)
