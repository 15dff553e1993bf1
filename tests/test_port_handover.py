"""A claimed warm worktree's block of ports passes to its environment without ever being free: a refill
that allocates between the claim and the environment's set-up gets another block (real PostgreSQL)."""

from __future__ import annotations

import asyncpg

from activities.environments.ports import PortActivities, allocate_block, hand_over_block
from isolator.contracts.environment import PortRequest
from isolator.settings import Settings


async def codebase_with_warm_worktree(db: asyncpg.Pool, settings: Settings) -> tuple[object, object]:
    codebase = await db.fetchval(
        "INSERT INTO codebases (name, canonical_path, default_branch, host) VALUES ('ports', '/r', 'main', $1) "
        "RETURNING id", settings.host)
    warm = await db.fetchval("INSERT INTO warm_worktrees (codebase_id, path, state) VALUES ($1, '/w/1', 'ready') "
                             "RETURNING id", codebase)
    return codebase, warm


async def new_environment(db: asyncpg.Pool, codebase: object, name: str) -> str:
    return str(await db.fetchval(
        "INSERT INTO isolation_environments (codebase_id, workflow_type, workflow_id, working_path, branch_name) "
        "VALUES ($1, 'thread', $2, $3, $2) RETURNING id", codebase, name, f"/w/{name}"))


async def test_a_claimed_block_is_taken_over_though_a_refill_allocated_in_between(
        db: asyncpg.Pool, settings: Settings) -> None:
    codebase, warm = await codebase_with_warm_worktree(db, settings)
    warm_block = await allocate_block(db, settings, "warm_worktree_id", warm, 2)
    async with db.acquire() as connection, connection.transaction():
        claimed = await hand_over_block(connection, warm, "/w/thread-a")
        await connection.execute("DELETE FROM warm_worktrees WHERE id = $1", warm)
    assert claimed == warm_block

    refill = await db.fetchval("INSERT INTO warm_worktrees (codebase_id, path, state) VALUES ($1, '/w/2', 'making') "
                               "RETURNING id", codebase)
    refill_block = await allocate_block(db, settings, "warm_worktree_id", refill, 2)
    assert refill_block.first > warm_block.last, "the claimed block was never free"

    environment = await new_environment(db, codebase, "thread-a")
    request = PortRequest(environment, 2, settings.host, preferred=claimed)
    assert await PortActivities(db, settings).allocate_ports(request) == warm_block
    holders = await db.fetch("SELECT environment_id, claimed_for FROM port_allocations WHERE port BETWEEN $1 AND $2",
                             warm_block.first, warm_block.last)
    assert [(str(row["environment_id"]), row["claimed_for"]) for row in holders] == [(environment, None)] * 2
    assert await PortActivities(db, settings).allocate_ports(request) == warm_block, "a retry keeps its block"


async def test_a_block_of_another_size_is_given_up_and_an_expired_claim_is_freed(
        db: asyncpg.Pool, settings: Settings) -> None:
    codebase, warm = await codebase_with_warm_worktree(db, settings)
    await allocate_block(db, settings, "warm_worktree_id", warm, 2)
    async with db.acquire() as connection, connection.transaction():
        claimed = await hand_over_block(connection, warm, "/w/thread-b")
    assert claimed is not None
    environment = await new_environment(db, codebase, "thread-b")

    # `[setup] ports` changed since the warm set-up ran: three ports now, none of the old block kept.
    three = await PortActivities(db, settings).allocate_ports(PortRequest(environment, 3, settings.host, claimed))
    assert three.last - three.first == 2
    assert await db.fetchval("SELECT count(*) FROM port_allocations WHERE environment_id = $1", environment) == 3

    # A claim no environment took over (its create was undone) is freed after an hour.
    other_warm = await db.fetchval("INSERT INTO warm_worktrees (codebase_id, path, state) VALUES ($1, '/w/3', "
                                   "'ready') RETURNING id", codebase)
    await allocate_block(db, settings, "warm_worktree_id", other_warm, 2)
    async with db.acquire() as connection, connection.transaction():
        abandoned = await hand_over_block(connection, other_warm, "/w/undone")
    await db.execute("UPDATE port_allocations SET claimed_at = now() - interval '2 hours' WHERE claimed_for IS NOT NULL")
    await allocate_block(db, settings, "environment_id", await new_environment(db, codebase, "thread-c"), 2)
    assert abandoned is not None
    assert not await db.fetchval("SELECT count(*) FROM port_allocations WHERE claimed_for IS NOT NULL")
