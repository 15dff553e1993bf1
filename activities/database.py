"""The PostgreSQL connection pool and row conversions shared by the database activities."""

from __future__ import annotations

import json

import asyncpg

from isolator.contracts.codebase import Codebase
from isolator.contracts.environment import Environment


async def _init_connection(connection: asyncpg.Connection) -> None:
    await connection.set_type_codec("jsonb", encoder=json.dumps, decoder=json.loads, schema="pg_catalog")


async def _keep_session(connection: asyncpg.Connection) -> None:
    """What the pool does to a released connection beyond rolling back an open transaction: nothing.

    asyncpg's default runs a reset query (unlock advisory locks, close cursors, unlisten, reset
    settings) on every release, one more round trip to PostgreSQL per call. Nothing here leaves such
    session state behind: no LISTEN, SET, cursor or session-level advisory lock goes through the pool.
    """


async def create_pool(database_url: str, *, min_size: int = 1, max_size: int = 10) -> asyncpg.Pool:
    return await asyncpg.create_pool(
        database_url, min_size=min_size, max_size=max_size, init=_init_connection, reset=_keep_session
    )


def codebase_from_row(row: asyncpg.Record, prefix: str = "") -> Codebase:
    return Codebase(
        id=str(row[f"{prefix}id"]),
        name=row[f"{prefix}name"],
        canonical_path=row[f"{prefix}canonical_path"],
        default_branch=row[f"{prefix}default_branch"],
        host=row[f"{prefix}host"],
        repository_url=row[f"{prefix}repository_url"],
    )


def environment_from_row(row: asyncpg.Record, prefix: str = "") -> Environment:
    metadata = row[f"{prefix}metadata"] or {}
    return Environment(
        id=str(row[f"{prefix}id"]),
        codebase_id=str(row[f"{prefix}codebase_id"]),
        workflow_type=row[f"{prefix}workflow_type"],
        workflow_id=row[f"{prefix}workflow_id"],
        working_path=row[f"{prefix}working_path"],
        branch_name=row[f"{prefix}branch_name"],
        status=row[f"{prefix}status"],
        provider=row[f"{prefix}provider"],
        from_fork=bool(metadata.get("from_fork", False)),
        setup_state=row[f"{prefix}setup_state"],
        adopted=bool(metadata.get("adopted", False)),
        recorded_by=metadata.get("recorded_by"),
    )
