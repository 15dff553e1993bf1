"""Ports of its own: each active environment holds a block of consecutive ports from PORT_RANGE; so does
each warm worktree from its making, and the environment that claims it takes that very block over: the
claim marks the block for the worktree's path as the warm row goes (`hand_over_block`), so no refill can
take it in between, and the environment's allocation takes the marked block.

The block is unique among the host's active environments by the database's primary key on
(host, port), not by a lock in memory: concurrent allocations that pick the same ports collide
there, and the loser picks again. A block is also free on the host when it is taken, checked by
binding each port. It is released when the environment is destroyed.
"""

from __future__ import annotations

import socket
from typing import Literal

import asyncpg
from temporalio import activity
from temporalio.exceptions import ApplicationError

from isolator.contracts.environment import PortBlock, PortRequest
from isolator.settings import Settings

ATTEMPTS = 20
# A claimed block that no environment took over by then was left by a create undone: free again.
CLAIM_EXPIRY = "1 hour"


class PortActivities:
    def __init__(self, pool: asyncpg.Pool, settings: Settings) -> None:
        self.pool = pool
        self.settings = settings

    @activity.defn
    async def allocate_ports_here(self, request: PortRequest) -> PortBlock | None:
        """`allocate_ports` as a local activity of the workflow's worker; None when the codebase is
        on another host, whose queue is asked instead."""
        if request.host != self.settings.host:
            return None
        return await self.allocate_ports(request)

    @activity.defn
    async def allocate_ports(self, request: PortRequest) -> PortBlock:
        """The environment's block: the one it holds already (a retry), the one of the warm worktree it
        claimed (its set-up may have written it), or a new one."""
        held = await held_block(self.pool, "environment_id", request.environment_id)
        if held is not None:
            return held
        if request.preferred is not None:
            taken_over = await self._take_over(request.environment_id, request.preferred)
            if taken_over is not None and taken_over.last - taken_over.first + 1 == request.count:
                return taken_over
            if taken_over is not None:  # `[setup] ports` changed since the warm set-up: a block of the new size
                await self.pool.execute("DELETE FROM port_allocations WHERE environment_id = $1",
                                        request.environment_id)
        return await allocate_block(self.pool, self.settings, "environment_id", request.environment_id, request.count)

    async def _take_over(self, environment_id: str, claimed: PortBlock) -> PortBlock | None:
        """The claimed warm worktree's block, marked for it by `hand_over_block`; None when the mark
        expired (a set-up that waited over an hour) or the claim came before marks existed."""
        try:
            ports = await self.pool.fetch(
                """UPDATE port_allocations SET environment_id = $2, claimed_for = NULL, claimed_at = NULL
                    WHERE host = $1 AND claimed_for IS NOT NULL AND port BETWEEN $3 AND $4 RETURNING port""",
                self.settings.host, environment_id, claimed.first, claimed.last)
        except asyncpg.ForeignKeyViolationError:
            raise ApplicationError("the environment is gone", non_retryable=True) from None
        if not ports:
            return None
        return PortBlock(min(row["port"] for row in ports), max(row["port"] for row in ports))


Holder = Literal["environment_id", "warm_worktree_id"]


async def allocate_block(pool: asyncpg.Pool, settings: Settings, holder: Holder, holder_id: object,
                         count: int) -> PortBlock:
    """A new block of `count` free ports for the environment or warm worktree `holder_id`."""
    await pool.execute(f"DELETE FROM port_allocations WHERE host = $1 AND claimed_at < now() - interval '{CLAIM_EXPIRY}'",
                       settings.host)
    for _ in range(ATTEMPTS):
        taken = {row["port"] for row in await pool.fetch(
            "SELECT port FROM port_allocations WHERE host = $1", settings.host)}
        first = _free_block(settings, taken, count)
        try:
            return await _insert(pool, settings.host, holder, holder_id, first, count)
        except asyncpg.UniqueViolationError:
            continue  # a concurrent allocation took one of them first: pick again
        except asyncpg.ForeignKeyViolationError:
            raise ApplicationError("the environment is gone", non_retryable=True) from None
    raise ApplicationError(f"no block of {count} free ports in PORT_RANGE {settings.port_range}")


async def hand_over_block(connection: asyncpg.Connection, warm_worktree_id: object, path: str) -> PortBlock | None:
    """In the claim's transaction, before the warm row goes (and its ports with it): its block, marked
    for the worktree's new path until the environment's allocation takes it over."""
    ports = await connection.fetch(
        """UPDATE port_allocations SET warm_worktree_id = NULL, claimed_for = $2, claimed_at = now()
            WHERE warm_worktree_id = $1 RETURNING port""", warm_worktree_id, path)
    if not ports:
        return None
    return PortBlock(min(row["port"] for row in ports), max(row["port"] for row in ports))


async def held_block(pool: asyncpg.Pool, holder: Holder, holder_id: object) -> PortBlock | None:
    row = await pool.fetchrow(
        f"SELECT min(port) AS first, max(port) AS last FROM port_allocations WHERE {holder} = $1", holder_id)
    return PortBlock(row["first"], row["last"]) if row["first"] is not None else None


async def _insert(pool: asyncpg.Pool, host: str, holder: Holder, holder_id: object, first: int,
                  count: int) -> PortBlock:
    async with pool.acquire() as connection, connection.transaction():
        await connection.executemany(
            f"INSERT INTO port_allocations (host, port, {holder}) VALUES ($1, $2, $3)",
            [(host, port, holder_id) for port in range(first, first + count)],
        )
    return PortBlock(first, first + count - 1)


def _free_block(settings: Settings, taken: set[int], count: int) -> int:
    low, high = settings.ports
    start = low
    while start + count - 1 <= high:
        clash = next((port for port in range(start, start + count) if port in taken or not _bindable(port)), None)
        if clash is None:
            return start
        start = clash + 1
    raise ApplicationError(f"no block of {count} free ports in PORT_RANGE {settings.port_range}")


def _bindable(port: int) -> bool:
    """Nothing on this host listens on the port (TCP, any address)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("", port))
        except OSError:
            return False
    return True
