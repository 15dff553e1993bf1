"""Conversation activities: quick PostgreSQL calls, run as local activities."""

from __future__ import annotations

import asyncpg
from temporalio import activity

from activities.contracts import CloseInput, Conversation, ConversationInput, LinkCodebaseInput
from activities.database import codebase_from_row, environment_from_row
from activities.repositories import repository_key


class ConversationActivities:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    @activity.defn
    async def record_conversation(self, request: ConversationInput) -> Conversation:
        """Upsert the conversation, touch `last_activity_at`, and find its codebase and environment."""
        async with self.pool.acquire() as connection, connection.transaction():
            row = await connection.fetchrow(
                """INSERT INTO conversations (platform, platform_conversation_id) VALUES ($1, $2)
                   ON CONFLICT (platform, platform_conversation_id)
                   DO UPDATE SET last_activity_at = now(), closed_at = NULL
                   RETURNING id, codebase_id, environment_id, cwd, attached_by""",
                request.platform, request.conversation_id,
            )
            codebase_id = row["codebase_id"]
            choices: list[str] = []
            if codebase_id is None and request.repository_url:
                # An event names its repository: only that repository's codebase will do.
                codebase_id = await _codebase_for_repository(connection, request.repository_url)
                if codebase_id is not None:
                    await connection.execute(
                        "UPDATE conversations SET codebase_id = $2 WHERE id = $1", row["id"], codebase_id
                    )
            elif codebase_id is None:
                names = await connection.fetch("SELECT id, name FROM codebases ORDER BY name")
                if len(names) == 1:
                    # With exactly one codebase registered, it is everyone's codebase.
                    codebase_id = names[0]["id"]
                    await connection.execute(
                        "UPDATE conversations SET codebase_id = $2 WHERE id = $1", row["id"], codebase_id
                    )
                else:
                    choices = [name["name"] for name in names]
            codebase = None
            if codebase_id is not None:
                codebase = codebase_from_row(await connection.fetchrow("SELECT * FROM codebases WHERE id = $1", codebase_id))
            environment = None
            if row["environment_id"] is not None:
                environment = environment_from_row(
                    await connection.fetchrow("SELECT * FROM isolation_environments WHERE id = $1", row["environment_id"])
                )
        return Conversation(
            row_id=str(row["id"]),
            platform=request.platform,
            conversation_id=request.conversation_id,
            cwd=row["cwd"],
            codebase=codebase,
            environment=environment,
            codebase_choices=choices,
            attached_by=row["attached_by"],
        )

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


async def _codebase_for_repository(connection: asyncpg.Connection, url: str) -> object | None:
    """The codebase whose repository URL names the same repository, however it is spelled."""
    wanted = repository_key(url)
    rows = await connection.fetch("SELECT id, repository_url FROM codebases WHERE repository_url IS NOT NULL")
    return next((row["id"] for row in rows if repository_key(row["repository_url"]) == wanted), None)
