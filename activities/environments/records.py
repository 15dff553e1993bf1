"""Isolation-environment rows: lookups, records, listings and destruction.

Quick PostgreSQL calls, run as local activities.
"""

from __future__ import annotations

import asyncpg
from temporalio import activity
from temporalio.client import Client
from temporalio.exceptions import ApplicationError

from activities.database import codebase_from_row, environment_from_row
from activities.environments.signals import retried_removal
from isolator.contracts.cleanup import (
    EnvironmentListing,
    OpenConversation,
    TrackedEnvironment,
)
from isolator.contracts.environment import (
    Attached,
    AttachInput,
    Environment,
    EnvironmentCount,
    EnvironmentRef,
    EnvironmentsOfCodebase,
    IdentityQuery,
    MarkDestroyedInput,
    NamedEnvironmentQuery,
    PortBlock,
    RecordedEnvironment,
    RecordEnvironmentInput,
    Retired,
    RetireInput,
)
from isolator.contracts.errors import LIMIT_REACHED, WORKTREE_CONFLICT
from isolator.contracts.setup import EnvironmentDetails, RunLine, SetupStateInput
from isolator.settings import Settings

_COUNT_ACTIVE = "SELECT count(*) FROM isolation_environments WHERE codebase_id = $1 AND status = 'active'"
# A hibernated environment keeps its identity: the next message for the work wakes it.
_BY_IDENTITY = """SELECT * FROM isolation_environments WHERE codebase_id = $1 AND workflow_type = $2
                  AND workflow_id = $3 AND status IN ('active', 'hibernated')"""
# A change, or the same attachment by the same message again: a retry after a crash that lost the
# first answer must still tell the user.
_ATTACH = """UPDATE conversations SET environment_id = $2, cwd = $3, attached_by = $4
             WHERE id = $1 AND (environment_id IS DISTINCT FROM $2 OR attached_by = $4)
             RETURNING id"""

# Raw facts for the cleanup rules (isolator/cleanup_rules.py): the open conversations attached to each
# environment, and how long since any attached conversation, or the environment itself, was active.
_LIST = """
SELECT e.*, c.name AS c_name, c.canonical_path AS c_canonical_path, c.default_branch AS c_default_branch,
       c.host AS c_host, c.repository_url AS c_repository_url, c.id AS c_id,
       coalesce(array_agg(v.platform ORDER BY v.id) FILTER (WHERE v.id IS NOT NULL AND v.closed_at IS NULL), '{}')
           AS open_platforms,
       coalesce(array_agg(v.platform_conversation_id ORDER BY v.id)
                    FILTER (WHERE v.id IS NOT NULL AND v.closed_at IS NULL), '{}')
           AS open_conversation_ids,
       coalesce(array_agg(floor(extract(epoch FROM now() - v.last_activity_at) / 86400)::int ORDER BY v.id)
                    FILTER (WHERE v.id IS NOT NULL AND v.closed_at IS NULL), '{}')
           AS open_days_inactive,
       floor(extract(epoch FROM now() - coalesce(max(v.last_activity_at), e.created_at)) / 86400)::int
           AS days_inactive,
       floor(extract(epoch FROM now() - coalesce(max(v.last_activity_at), e.created_at)))::bigint AS seconds_inactive
FROM isolation_environments e
JOIN codebases c ON c.id = e.codebase_id
LEFT JOIN conversations v ON v.environment_id = e.id
WHERE e.codebase_id = $1 AND e.status = $2
GROUP BY e.id, c.id
ORDER BY e.created_at, e.id
"""


class EnvironmentActivities:
    def __init__(self, pool: asyncpg.Pool, settings: Settings, client: Client | None = None) -> None:
        self.pool = pool
        self.settings = settings
        self.client = client  # asks an environment's workflow what `/status` says of a retried removal
        self.limit = settings.max_worktrees_per_codebase

    @activity.defn
    async def find_environment_by_identity(self, query: IdentityQuery) -> Environment | None:
        row = await self.pool.fetchrow(_BY_IDENTITY, query.codebase_id, query.workflow_type, query.workflow_id)
        return environment_from_row(row) if row else None

    @activity.defn
    async def retire_environment(self, retire: RetireInput) -> Retired:
        """Mark an environment whose worktree is gone as destroyed and clear the conversation's reference.
        The message that marked it, run again (its workflow task lost), is told it marked it: it alone
        ends the environment's workflow and tells the user."""
        async with self.pool.acquire() as connection, connection.transaction():
            marked = await connection.fetchval(
                """UPDATE isolation_environments
                   SET status = 'destroyed', destroyed_at = coalesce(destroyed_at, now()),
                       metadata = metadata || jsonb_build_object('retired_by', $2::text)
                   WHERE id = $1 AND (status = 'active' OR metadata->>'retired_by' = $2) RETURNING id""",
                retire.environment_id, retire.key,
            )
            await connection.execute(
                "UPDATE conversations SET environment_id = NULL, cwd = NULL WHERE id = $1 AND environment_id = $2",
                retire.conversation_row_id, retire.environment_id,
            )
            if marked is not None:
                await connection.execute("DELETE FROM port_allocations WHERE environment_id = $1", retire.environment_id)
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

    @activity.defn
    async def list_environments(self, request: EnvironmentsOfCodebase) -> EnvironmentListing:
        """The active ones; with `request.hibernated`, the hibernated ones instead (the stale rule's)."""
        rows = await self.pool.fetch(_LIST, request.codebase_id, "hibernated" if request.hibernated else "active")
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
                    provider=row["provider"],
                    from_fork=bool((row["metadata"] or {}).get("from_fork", False)),
                ),
                created_by_platform=row["created_by_platform"],
                open_conversations=[
                    OpenConversation(platform, days, conversation_id)
                    for platform, days, conversation_id in zip(row["open_platforms"], row["open_days_inactive"],
                                                               row["open_conversation_ids"])
                ],
                days_inactive=row["days_inactive"],
                start_commit=(row["metadata"] or {}).get("start_commit"),
                seconds_inactive=row["seconds_inactive"],
            )
            for row in rows
        ]
        budget = self.settings.disk_budget_gb
        return EnvironmentListing(environments, self.limit, self.settings.stale_threshold_days,
                                  int(budget * 1024**3) if budget is not None else None)

    @activity.defn
    async def find_named_environment(self, query: NamedEnvironmentQuery) -> Environment | None:
        """An active (or hibernated) environment by `type-id` (`issue-42`, `task-name`) or by branch (`thread-1a2b3c4d`)."""
        row = await self.pool.fetchrow(
            """SELECT * FROM isolation_environments
               WHERE codebase_id = $1 AND status IN ('active', 'hibernated')
                 AND (branch_name = $2 OR workflow_type || '-' || workflow_id = $2)
               ORDER BY branch_name = $2 DESC LIMIT 1""",
            query.codebase_id, query.name,
        )
        return environment_from_row(row) if row else None

    @activity.defn
    async def mark_environment_destroyed(self, request: MarkDestroyedInput) -> None:
        """The worktree is gone: the row says so and no conversation points at it any more."""
        async with self.pool.acquire() as connection, connection.transaction():
            await connection.execute(
                """UPDATE isolation_environments
                   SET status = 'destroyed', destroyed_at = now(), removal_reason = $2,
                       archive_ref = coalesce($3, archive_ref), branch_tip = coalesce($4, branch_tip),
                       archived_at = CASE WHEN $3::text IS NULL THEN archived_at ELSE now() END
                   WHERE id = $1 AND status IN ('active', 'hibernated')""",
                request.environment_id, request.reason, request.archive_ref, request.branch_tip,
            )
            await connection.execute(
                "UPDATE conversations SET environment_id = NULL, cwd = NULL WHERE environment_id = $1",
                request.environment_id,
            )
            await connection.execute("DELETE FROM port_allocations WHERE environment_id = $1", request.environment_id)

    @activity.defn
    async def record_setup_state(self, request: SetupStateInput) -> None:
        await self.pool.execute("UPDATE isolation_environments SET setup_state = $2, setup_note = $3 WHERE id = $1",
                                request.environment_id, request.state, request.note)

    @activity.defn
    async def environment_details(self, environment_id: str) -> EnvironmentDetails:
        row = await self.pool.fetchrow(
            """SELECT e.setup_state, e.setup_note, min(p.port) AS first, max(p.port) AS last
               FROM isolation_environments e LEFT JOIN port_allocations p ON p.environment_id = e.id
               WHERE e.id = $1 GROUP BY e.id""",
            environment_id,
        )
        if row is None:
            return EnvironmentDetails("none")
        ports = PortBlock(row["first"], row["last"]) if row["first"] is not None else None
        runs = await self.pool.fetch(
            """SELECT status, left(message, 200) AS message, platform || ':' || conversation_id AS conversation,
                      extract(epoch FROM now() - coalesce(started_at, queued_at))::int AS seconds
               FROM agent_runs WHERE environment_id = $1 AND status IN ('queued', 'running')
               ORDER BY queued_at LIMIT 50""",
            environment_id,
        )
        lines = {status: [RunLine(run["message"], run["conversation"], run["seconds"])
                          for run in runs if run["status"] == status] for status in ("running", "queued")}
        running = lines["running"][0] if lines["running"] else None
        asked = await self.pool.fetch(
            """SELECT summary, code, extract(epoch FROM now() - created_at)::int AS seconds FROM approvals
               WHERE environment_id = $1 AND state = 'pending' ORDER BY created_at""", environment_id)
        awaiting = [f"Waiting for an answer to {item['summary']} (code `{item['code']}`), asked {_ago(item['seconds'])}."
                    for item in asked]
        retried = await retried_removal(self.client, environment_id) if self.client is not None else None
        return EnvironmentDetails(row["setup_state"], ports, running, lines["queued"], row["setup_note"], awaiting,
                                  retried)

    async def _check_room(self, connection: asyncpg.Connection, codebase_id: str) -> None:
        active = await connection.fetchval(_COUNT_ACTIVE, codebase_id)
        if active >= self.limit:
            raise ApplicationError(f"{active}/{self.limit} worktrees", type=LIMIT_REACHED, non_retryable=True)

    async def _insert(self, connection: asyncpg.Connection, record: RecordEnvironmentInput) -> asyncpg.Record:
        try:
            return await connection.fetchrow(
                """INSERT INTO isolation_environments
                       (codebase_id, workflow_type, workflow_id, working_path, branch_name,
                        created_by_platform, provider, metadata)
                   VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
                   RETURNING *""",
                record.codebase_id, record.workflow_type, record.workflow_id, record.working_path,
                record.branch_name, record.platform, record.provider,
                {**record.metadata, **({"recorded_by": record.key} if record.key else {})},
            )
        except asyncpg.UniqueViolationError:
            raise ApplicationError(
                f"`{record.working_path}` is already recorded for another piece of work.",
                type=WORKTREE_CONFLICT,
                non_retryable=True,
            ) from None


def _ago(seconds: int) -> str:
    minutes = seconds // 60
    return "just now" if minutes < 1 else f"{minutes} min ago" if minutes < 120 else f"{minutes // 60} h ago"
