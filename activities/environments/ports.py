"""Ports of its own: each active environment holds a block of consecutive ports from PORT_RANGE.

The block is unique among the host's active environments by the database's primary key on
(host, port), not by a lock in memory: concurrent allocations that pick the same ports collide
there, and the loser picks again. A block is also free on the host when it is taken, checked by
binding each port. It is released when the environment is destroyed.
"""

from __future__ import annotations

import socket

import asyncpg
from temporalio import activity
from temporalio.exceptions import ApplicationError

from isolator.contracts.environment import PortBlock, PortRequest
from isolator.settings import Settings

ATTEMPTS = 20


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
        """The environment's block: the one it holds already (a retry), or a new one."""
        held = await self._held(request.environment_id)
        if held is not None:
            return held
        for _ in range(ATTEMPTS):
            taken = {row["port"] for row in await self.pool.fetch(
                "SELECT port FROM port_allocations WHERE host = $1", self.settings.host)}
            first = self._free_block(taken, request.count)
            try:
                async with self.pool.acquire() as connection, connection.transaction():
                    await connection.executemany(
                        "INSERT INTO port_allocations (host, port, environment_id) VALUES ($1, $2, $3)",
                        [(self.settings.host, port, request.environment_id) for port in range(first, first + request.count)],
                    )
                return PortBlock(first, first + request.count - 1)
            except asyncpg.UniqueViolationError:
                continue  # a concurrent allocation took one of them first: pick again
            except asyncpg.ForeignKeyViolationError:
                raise ApplicationError("the environment is gone", non_retryable=True) from None
        raise ApplicationError(f"no block of {request.count} free ports in PORT_RANGE {self.settings.port_range}")

    async def _held(self, environment_id: str) -> PortBlock | None:
        row = await self.pool.fetchrow(
            "SELECT min(port) AS first, max(port) AS last FROM port_allocations WHERE environment_id = $1",
            environment_id,
        )
        return PortBlock(row["first"], row["last"]) if row["first"] is not None else None

    def _free_block(self, taken: set[int], count: int) -> int:
        low, high = self.settings.ports
        start = low
        while start + count - 1 <= high:
            clash = next((port for port in range(start, start + count) if port in taken or not _bindable(port)), None)
            if clash is None:
                return start
            start = clash + 1
        raise ApplicationError(f"no block of {count} free ports in PORT_RANGE {self.settings.port_range}")


def _bindable(port: int) -> bool:
    """Nothing on this host listens on the port (TCP, any address)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("", port))
        except OSError:
            return False
    return True
