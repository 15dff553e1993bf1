"""Which installation of the App holds a repository (migration 027), as each webhook's `installation.id`
says: recorded for the repository, and with its codebase when one is registered."""

from __future__ import annotations

import asyncpg

from isolator.contracts.codebase import repository_full_name

Connection = asyncpg.Pool | asyncpg.Connection


async def record_installation(connection: Connection, repository: str, installation_id: int) -> None:
    """The repository is in this installation (again, if it was taken out)."""
    await connection.execute(
        """INSERT INTO github_installations (repository, installation_id) VALUES (lower($1), $2)
           ON CONFLICT (repository) DO UPDATE SET installation_id = $2, removed_at = NULL, updated_at = now()""",
        repository, installation_id)
    for codebase_id in await codebases_of(connection, repository):
        await connection.execute("UPDATE codebases SET github_installation_id = $2 WHERE id = $1",
                                 codebase_id, installation_id)


async def mark_removed(connection: Connection, repository: str, installation_id: int) -> bool:
    """The repository was taken out of the installation; True the first time it is said."""
    marked = await connection.fetchval(
        """INSERT INTO github_installations (repository, installation_id, removed_at) VALUES (lower($1), $2, now())
           ON CONFLICT (repository) DO UPDATE SET removed_at = now(), updated_at = now()
               WHERE github_installations.removed_at IS NULL
           RETURNING true""", repository, installation_id)
    for codebase_id in await codebases_of(connection, repository):
        await connection.execute("UPDATE codebases SET github_installation_id = NULL WHERE id = $1", codebase_id)
    return bool(marked)


async def installation_of(connection: Connection, repository: str) -> int | None:
    """The installation that holds the repository now; None when none said so, or it was taken out."""
    return await connection.fetchval(
        "SELECT installation_id FROM github_installations WHERE repository = lower($1) AND removed_at IS NULL",
        repository)


async def codebases_of(connection: Connection, repository: str) -> list[object]:
    """The codebases whose repository URL names `owner/name` (https or ssh, any case)."""
    rows = await connection.fetch("SELECT id, repository_url FROM codebases WHERE repository_url IS NOT NULL")
    return [row["id"] for row in rows
            if (repository_full_name(row["repository_url"]) or "").lower() == repository.lower()]
