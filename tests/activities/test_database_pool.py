"""The pool skips asyncpg's reset query on release (activities/database.py): what it still guarantees."""

from __future__ import annotations

import asyncpg
import pytest

from activities.database import create_pool
from tests.conftest import EmbeddedPostgres


@pytest.fixture
async def one_connection(postgres: EmbeddedPostgres) -> asyncpg.Pool:
    """A pool of one connection, so that the next acquire gets the connection just released."""
    pool = await create_pool(postgres.url, min_size=1, max_size=1)
    yield pool
    await pool.close()


async def test_a_transaction_left_open_is_rolled_back_on_release(one_connection: asyncpg.Pool) -> None:
    async with one_connection.acquire() as connection:
        await connection.execute("CREATE TEMPORARY TABLE IF NOT EXISTS scratch (n int)")
        await connection.execute("BEGIN")
        await connection.execute("INSERT INTO scratch VALUES (1)")
    async with one_connection.acquire() as connection:
        assert await connection.fetchval("SELECT count(*) FROM scratch") == 0
        assert not connection.is_in_transaction()


async def test_a_released_connection_runs_no_reset_query(one_connection: asyncpg.Pool, postgres: EmbeddedPostgres) -> None:
    async with one_connection.acquire() as connection:
        pid = await connection.fetchval("SELECT pg_backend_pid()")
    observer = await asyncpg.connect(postgres.url)
    try:
        last = await observer.fetchval("SELECT query FROM pg_stat_activity WHERE pid = $1", pid)
    finally:
        await observer.close()
    assert last == "SELECT pg_backend_pid()", "asyncpg's default reset would show here"
