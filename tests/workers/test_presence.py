"""A process's row in `service_processes` while it runs (workers/presence.py), on a real PostgreSQL."""

from __future__ import annotations

import asyncio
import os
import uuid

import asyncpg

from activities.database import create_pool
from activities.hosts.liveness import liveness_of
from isolator.settings import Settings
from workers.postgres import EmbeddedPostgres
from workers.presence import present


async def test_the_row_is_refreshed_while_it_runs_and_stopped_at_its_exit(settings: Settings, db: asyncpg.Pool) -> None:
    async with present(db, settings, "worker", runs_messages=True) as presence:
        assert presence is not None
        first = await db.fetchval("SELECT last_seen FROM service_processes WHERE id = $1", presence.id)
        for _ in range(100):
            if await db.fetchval("SELECT last_seen FROM service_processes WHERE id = $1", presence.id) > first:
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("the row was not refreshed")
        alive = await liveness_of(db, settings.host)
        assert alive.alive and alive.workers == 1
    row = await db.fetchrow("SELECT * FROM service_processes WHERE id = $1", presence.id)
    assert row["stopped_at"] is not None and row["pid"] == os.getpid() and row["host"] == settings.host
    assert not (await liveness_of(db, settings.host)).alive, "a clean stop is silent at once"


async def test_a_database_not_migrated_yet_leaves_the_process_unlisted_not_stopped(
        settings: Settings, postgres: EmbeddedPostgres) -> None:
    name = f"unmigrated_{uuid.uuid4().hex[:8]}"
    assert "/isolator?" in postgres.url  # the embedded server's database, beside which this one is made
    admin = await asyncpg.connect(postgres.url)
    await admin.execute(f"CREATE DATABASE {name}")
    try:
        pool = await create_pool(postgres.url.replace("/isolator?", f"/{name}?"), max_size=2)
        try:
            async with present(pool, settings, "worker", runs_messages=True) as presence:
                assert presence is None
        finally:
            await pool.close()
    finally:
        await admin.execute(f"DROP DATABASE {name}")
        await admin.close()
