"""The rows of archived environments: removed ones that can be restored, hibernated ones, the
archives the retention prunes, and the disk use the scheduled cleanup measures.

Quick PostgreSQL calls, run as local activities.
"""

from __future__ import annotations

import asyncpg
from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.database import codebase_from_row, environment_from_row
from isolator.contracts.archive import (
    DiskUse,
    ExpiredArchives,
    PrunedArchives,
    RecordBroughtBackInput,
    RecordRestoredInput,
    RemovedEnvironment,
    RemovedListing,
    RemovedQuery,
)
from isolator.contracts.codebase import Codebase
from isolator.contracts.environment import Environment, IdentityQuery, MarkDestroyedInput
from isolator.contracts.errors import LIMIT_REACHED, WORKTREE_CONFLICT
from isolator.contracts.worktree import ArchivedBranch
from isolator.settings import Settings

# Archived and not yet pruned: removed ones (restored or not) and hibernated ones.
_ARCHIVED = """
SELECT e.*, c.name AS c_name, c.canonical_path AS c_canonical_path, c.default_branch AS c_default_branch,
       c.host AS c_host, c.repository_url AS c_repository_url, c.id AS c_id,
       coalesce(e.destroyed_at, e.archived_at) AS removed_at,
       floor(extract(epoch FROM now() - coalesce(e.destroyed_at, e.archived_at)) / 86400)::int AS age_days,
       h.workflow_type || '-' || h.workflow_id || ' at ' || h.working_path AS conflict,
       h.id AS holder_id, h.branch_name AS holder_branch, h.working_path AS holder_path, h.status AS holder_status
FROM isolation_environments e JOIN codebases c ON c.id = e.codebase_id
LEFT JOIN LATERAL (
    SELECT o.* FROM isolation_environments o
     WHERE o.status IN ('active', 'hibernated') AND o.id <> e.id
       AND (o.working_path = e.working_path
            OR (o.codebase_id, o.workflow_type, o.workflow_id) = (e.codebase_id, e.workflow_type, e.workflow_id))
     LIMIT 1) h ON true
WHERE e.archive_ref IS NOT NULL AND e.archive_pruned_at IS NULL AND e.status IN ('hibernated', 'destroyed')
"""
# ... that a restore can still bring back: not restored already.
_RESTORABLE = _ARCHIVED + " AND (e.status = 'hibernated' OR e.restored_as IS NULL)"


class ArchiveActivities:
    def __init__(self, pool: asyncpg.Pool, settings: Settings) -> None:
        self.pool = pool
        self.settings = settings

    @activity.defn
    async def list_removed_environments(self, query: RemovedQuery) -> RemovedListing:
        """What can still be restored, newest first; with a name, only what had that name."""
        named = """ AND e.codebase_id = $1
                AND ($2::text IS NULL OR e.branch_name = $2 OR e.workflow_type || '-' || e.workflow_id = $2)"""
        rows = await self.pool.fetch(_RESTORABLE + named + " ORDER BY removed_at DESC LIMIT 50",
                                     query.codebase_id, query.name)
        restored = 0 if rows else await self.pool.fetchval(
            f"SELECT count(*) FROM ({_ARCHIVED} AND e.restored_as IS NOT NULL {named}) AS restored",
            query.codebase_id, query.name)
        return RemovedListing([self._removed(row) for row in rows], self.settings.archive_retention_days, restored)

    @activity.defn
    async def find_removed_environment(self, environment_id: str) -> RemovedEnvironment | None:
        """The removed or hibernated environment, or one restored already (its `restored_as` set)."""
        row = await self.pool.fetchrow(
            _ARCHIVED + " AND e.id = $1", environment_id
        )
        return self._removed(row) if row else None

    @activity.defn
    async def find_returning_environment(self, query: IdentityQuery) -> RemovedEnvironment | None:
        """The work's latest environment when a close or the stale cleanup removed it, and it can come
        back: a message for the work again (an issue reopened, a thread woken up) returns to it. Not one
        removed on purpose (a command, the API), merged, or gone by hand."""
        row = await self.pool.fetchrow(
            _RESTORABLE + """ AND e.status = 'destroyed' AND e.codebase_id = $1 AND e.workflow_type = $2
                AND e.workflow_id = $3 AND (e.removal_reason = 'closed' OR e.removal_reason LIKE '% days inactive')
                ORDER BY removed_at DESC LIMIT 1""",
            query.codebase_id, query.workflow_type, query.workflow_id,
        )
        return self._removed(row) if row else None

    @activity.defn
    async def record_restored_environment(self, record: RecordRestoredInput) -> Environment:
        """The restored worktree is a new environment with the old one's identity, path and branch (the
        old one's workflow ended for good); the old row names it, and the asking conversation is attached."""
        async with self.pool.acquire() as connection, connection.transaction():
            old = await connection.fetchrow("SELECT * FROM isolation_environments WHERE id = $1 FOR UPDATE",
                                            record.removed_id)
            if old["restored_as"] is not None:  # this restore's own row, from an attempt whose answer was lost
                row = await connection.fetchrow("SELECT * FROM isolation_environments WHERE id = $1",
                                                old["restored_as"])
            else:
                await connection.execute("SELECT 1 FROM codebases WHERE id = $1 FOR UPDATE", old["codebase_id"])
                active = await connection.fetchval(
                    "SELECT count(*) FROM isolation_environments WHERE codebase_id = $1 AND status = 'active'",
                    old["codebase_id"])
                if active >= self.settings.max_worktrees_per_codebase:
                    raise ApplicationError(f"{active}/{self.settings.max_worktrees_per_codebase} worktrees",
                                           type=LIMIT_REACHED, non_retryable=True)
                row = await self._insert(connection, old, record.key)
                await connection.execute("UPDATE isolation_environments SET restored_as = $2 WHERE id = $1",
                                         record.removed_id, row["id"])
            if record.conversation_row_id is not None:
                await connection.execute(
                    "UPDATE conversations SET environment_id = $2, cwd = $3, attached_by = $4 WHERE id = $1",
                    record.conversation_row_id, row["id"], row["working_path"], record.key,
                )
        return environment_from_row(row)

    @activity.defn
    async def record_brought_back(self, record: RecordBroughtBackInput) -> None:
        """Its archived files went into the active environment of its branch: restored, as that one."""
        await self.pool.execute(
            "UPDATE isolation_environments SET restored_as = $2 WHERE id = $1 AND restored_as IS NULL",
            record.removed_id, record.into_id)

    @activity.defn
    async def mark_environment_hibernated(self, request: MarkDestroyedInput) -> None:
        """Its folder is gone, archived; the row, its branch, ports and conversations stay."""
        await self.pool.execute(
            """UPDATE isolation_environments
               SET status = 'hibernated', archive_ref = $2, branch_tip = $3, archived_at = now(), setup_state = 'none'
               WHERE id = $1 AND status = 'active'""",
            request.environment_id, request.archive_ref, request.branch_tip,
        )

    @activity.defn
    async def mark_environment_awake(self, environment_id: str) -> None:
        await self.pool.execute(
            "UPDATE isolation_environments SET status = 'active' WHERE id = $1 AND status = 'hibernated'",
            environment_id,
        )

    @activity.defn
    async def find_expired_archives(self, codebase: Codebase) -> ExpiredArchives:
        """Removed environments whose archive is older than ARCHIVE_RETENTION_DAYS (hibernated ones'
        archives are their only copy: never pruned)."""
        rows = await self.pool.fetch(
            """SELECT id, archive_ref, branch_name FROM isolation_environments
               WHERE codebase_id = $1 AND status = 'destroyed' AND archive_ref IS NOT NULL
                 AND archive_pruned_at IS NULL AND archived_at < now() - make_interval(days => $2)
               ORDER BY archived_at LIMIT 500""",
            codebase.id, self.settings.archive_retention_days,
        )
        return ExpiredArchives(codebase, [ArchivedBranch(str(row["id"]), row["archive_ref"], row["branch_name"])
                                          for row in rows])

    @activity.defn
    async def mark_archives_pruned(self, pruned: PrunedArchives) -> None:
        await self.pool.execute(
            "UPDATE isolation_environments SET archive_pruned_at = now() WHERE id = ANY($1::uuid[])",
            [archive.environment_id for archive in pruned.pruned],
        )

    @activity.defn
    async def record_disk_use(self, use: DiskUse) -> None:
        ids = list(use.sizes)
        await self.pool.execute(
            """UPDATE isolation_environments e SET disk_bytes = u.bytes, disk_measured_at = now(),
                      merge_proof = u.proof
               FROM unnest($1::uuid[], $2::bigint[], $3::text[]) AS u(id, bytes, proof) WHERE e.id = u.id""",
            ids, [use.sizes[i] for i in ids], [use.merge_proofs.get(i) for i in ids],
        )

    def _removed(self, row: asyncpg.Record) -> RemovedEnvironment:
        metadata = row["metadata"] or {}
        return RemovedEnvironment(
            id=str(row["id"]), codebase=codebase_from_row(row, prefix="c_"), status=row["status"],
            workflow_type=row["workflow_type"], workflow_id=row["workflow_id"], working_path=row["working_path"],
            branch=row["branch_name"], archive_ref=row["archive_ref"], branch_tip=row["branch_tip"],
            removed_at=row["removed_at"].isoformat(), reason=row["removal_reason"],
            days_left=max(0, self.settings.archive_retention_days - (row["age_days"] or 0)), provider=row["provider"],
            from_fork=bool(metadata.get("from_fork", False)), start_commit=metadata.get("start_commit"),
            restored_as=str(row["restored_as"]) if row["restored_as"] else None, conflict=row["conflict"] or None,
            holder_id=str(row["holder_id"]) if row["holder_id"] else None, holder_branch=row["holder_branch"],
            holder_path=row["holder_path"], holder_status=row["holder_status"],
        )

    async def _insert(self, connection: asyncpg.Connection, old: asyncpg.Record, key: str) -> asyncpg.Record:
        metadata = {name: value for name, value in (old["metadata"] or {}).items() if name != "recorded_by"}
        try:
            return await connection.fetchrow(
                """INSERT INTO isolation_environments
                       (codebase_id, workflow_type, workflow_id, working_path, branch_name, created_by_platform,
                        provider, metadata)
                   VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *""",
                old["codebase_id"], old["workflow_type"], old["workflow_id"], old["working_path"],
                old["branch_name"], old["created_by_platform"], old["provider"],
                {**metadata, "restored_from": str(old["id"]), "recorded_by": key},
            )
        except asyncpg.UniqueViolationError:
            raise ApplicationError(
                f"`{old['working_path']}` or its work is already another environment's.",
                type=WORKTREE_CONFLICT, non_retryable=True,
            ) from None
