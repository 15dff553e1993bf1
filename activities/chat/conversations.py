"""Conversation activities: quick PostgreSQL calls, run as local activities."""

from __future__ import annotations

from typing import Callable

import asyncpg
from temporalio import activity

from activities.database import codebase_from_row, environment_from_row
from isolator.contracts.codebase import Codebase
from isolator.contracts.environment import EnvironmentCheckInput, MoveConversationInput
from isolator.repositories import repository_key
from isolator.contracts.message import (
    CloseInput,
    Conversation,
    ConversationInput,
    ConversationMoved,
    LinkCodebaseInput,
)

# Touching `last_activity_at` is a write, and a write's commit waits for the WAL to reach the disk:
# on every message that doubled the statement's time. Staleness is counted in days, so a conversation
# touched within the minute (and not closed) is only read; any other is upserted, in the same statement.
_RECORD = """
WITH existing AS (
    SELECT id, codebase_id, environment_id, cwd, attached_by,
           closed_at IS NULL AND last_activity_at > now() - interval '1 minute' AS touched_recently
    FROM conversations WHERE platform = $1 AND platform_conversation_id = $2
), upserted AS (
    INSERT INTO conversations (platform, platform_conversation_id)
    SELECT $1, $2 WHERE NOT EXISTS (SELECT FROM existing WHERE touched_recently)
    ON CONFLICT (platform, platform_conversation_id)
    DO UPDATE SET last_activity_at = now(), closed_at = NULL
    RETURNING id, codebase_id, environment_id, cwd, attached_by
), conversation AS (
    SELECT id, codebase_id, environment_id, cwd, attached_by FROM existing WHERE touched_recently
    UNION ALL
    SELECT * FROM upserted
)
SELECT v.*,
       c.id AS c_id, c.name AS c_name, c.canonical_path AS c_canonical_path, c.default_branch AS c_default_branch,
       c.host AS c_host, c.repository_url AS c_repository_url,
       e.id AS e_id, e.codebase_id AS e_codebase_id, e.workflow_type AS e_workflow_type,
       e.workflow_id AS e_workflow_id, e.working_path AS e_working_path, e.branch_name AS e_branch_name,
       e.status AS e_status, e.provider AS e_provider, e.metadata AS e_metadata, e.setup_state AS e_setup_state
FROM conversation v
LEFT JOIN codebases c ON c.id = v.codebase_id
LEFT JOIN isolation_environments e ON e.id = v.environment_id
"""


class ConversationActivities:
    def __init__(self, pool: asyncpg.Pool, check_worktree: Callable[[EnvironmentCheckInput], str] | None = None,
                 host: str | None = None) -> None:
        self.pool = pool
        self.host = host  # this worker's host: a codebase elsewhere is asked whether its host answers
        # IsolationActivities.check_here: the conversation's worktree checked in the same local activity,
        # which spares a reuse one round of the workflow (a stat, microseconds)
        self.check_worktree = check_worktree

    @activity.defn
    async def record_conversation(self, request: ConversationInput) -> Conversation:
        """Upsert the conversation, touch `last_activity_at` (to the minute), and find its codebase and environment.

        One statement in the usual case (the conversation already has its codebase): it runs on
        every message, and each round trip to PostgreSQL is paid by every message.
        """
        row = await self.pool.fetchrow(_RECORD, request.platform, request.conversation_id)
        codebase = codebase_from_row(row, prefix="c_") if row["c_id"] is not None else None
        choices: list[str] = []
        if codebase is None:
            codebase, choices = await self._choose_codebase(row["id"], request.repository_url)
        environment = environment_from_row(row, prefix="e_") if row["e_id"] is not None else None
        check = None
        if self.check_worktree is not None and environment is not None and environment.status == "active" \
                and codebase is not None:
            check = self.check_worktree(EnvironmentCheckInput(environment.working_path, codebase.host,
                                                              environment.provider))
        return Conversation(
            row_id=str(row["id"]),
            platform=request.platform,
            conversation_id=request.conversation_id,
            cwd=row["cwd"],
            codebase=codebase,
            environment=environment,
            codebase_choices=choices,
            attached_by=row["attached_by"],
            environment_check=check if check in ("healthy", "missing") else None,
            codebase_here=codebase.host == self.host if codebase is not None and self.host is not None else None,
        )

    async def _choose_codebase(self, row_id: object, repository_url: str | None) -> tuple[Codebase | None, list[str]]:
        """A conversation without a codebase gets its event's repository, or the only one registered;
        otherwise the names to choose from."""
        async with self.pool.acquire() as connection, connection.transaction():
            if repository_url:
                # An event names its repository: only that repository's codebase will do.
                codebase_id, choices = await _codebase_for_repository(connection, repository_url), []
            else:
                names = await connection.fetch("SELECT id, name FROM codebases ORDER BY name")
                # With exactly one codebase registered, it is everyone's codebase.
                codebase_id = names[0]["id"] if len(names) == 1 else None
                choices = [name["name"] for name in names]
            if codebase_id is None:
                return None, choices
            await connection.execute("UPDATE conversations SET codebase_id = $2 WHERE id = $1", row_id, codebase_id)
            return codebase_from_row(await connection.fetchrow("SELECT * FROM codebases WHERE id = $1", codebase_id)), []

    @activity.defn
    async def link_conversation_codebase(self, link: LinkCodebaseInput) -> None:
        """Point the conversation at a codebase; an environment of another codebase is let go."""
        await self.pool.execute(
            """UPDATE conversations
               SET environment_id = CASE WHEN codebase_id = $2 THEN environment_id END,
                   cwd = CASE WHEN codebase_id = $2 THEN cwd END,
                   codebase_id = $2
               WHERE id = $1""",
            link.conversation_row_id, link.codebase_id,
        )

    @activity.defn
    async def close_conversation(self, request: CloseInput) -> str | None:
        """Record that the platform closed the conversation; its environment's id, if it has one."""
        environment_id = await self.pool.fetchval(
            """UPDATE conversations SET closed_at = now()
               WHERE platform = $1 AND platform_conversation_id = $2 RETURNING environment_id""",
            request.platform, request.conversation_id,
        )
        return str(environment_id) if environment_id else None

    @activity.defn
    async def move_conversation(self, request: MoveConversationInput) -> ConversationMoved:
        async with self.pool.acquire() as connection, connection.transaction():
            previous = await connection.fetchrow(
                """SELECT e.id, e.branch_name FROM conversations c JOIN isolation_environments e
                   ON e.id = c.environment_id WHERE c.id = $1 FOR UPDATE OF c""", request.conversation_row_id)
            await connection.execute(
                "UPDATE conversations SET environment_id = $2, cwd = $3 WHERE id = $1",
                request.conversation_row_id, request.environment_id, request.working_path,
            )
            if previous is None or str(previous["id"]) == request.environment_id:
                return ConversationMoved()
            others = await connection.fetchval(
                "SELECT count(*) FROM conversations WHERE environment_id = $1 AND closed_at IS NULL", previous["id"])
        return ConversationMoved(previous["branch_name"], previous_left_alone=others == 0)


async def _codebase_for_repository(connection: asyncpg.Connection, url: str) -> object | None:
    """The codebase whose repository URL names the same repository, however it is spelled."""
    wanted = repository_key(url)
    rows = await connection.fetch("SELECT id, repository_url FROM codebases WHERE repository_url IS NOT NULL")
    return next((row["id"] for row in rows if repository_key(row["repository_url"]) == wanted), None)
