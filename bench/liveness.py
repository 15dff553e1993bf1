"""Hosts are known (issue 49): how soon a SIGKILLed host is said silent (against a SIGTERMed one, which says
so itself), and what knowing it costs: `GET /api/hosts` and `/readyz` against `/healthz` on the same API, and
a process's refresh of its row against the `SELECT 1` that `/readyz` already asked.

The deployment is tests/hosts/cluster.py's (two worker processes of their own ISOLATOR_HOST, an API), on the
bench's PostgreSQL and Temporal.
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from contextlib import asynccontextmanager
from typing import AsyncIterator, Awaitable, Callable

from activities.database import create_pool
from activities.hosts.presence import SILENT_AFTER_SECONDS, record_alive, record_start
from bench.figures import Figure, Latency, timed, verdict
from bench.stack import Stack, free_port
from isolator.settings import load_settings
from tests.hosts.cluster import Cluster

SILENT_TARGET_S = SILENT_AFTER_SECONDS + 2.0  # a refresh missed, plus the page's own look
ROUNDS = 3


@asynccontextmanager
async def two_hosts(stack: Stack) -> AsyncIterator[Cluster]:
    cluster = Cluster(stack.work / f"liveness-{uuid.uuid4().hex[:6]}", stack.database_url,
                      stack.temporal.service_client.config.target_host, stack.temporal, ["hostA", "hostB"], 1,
                      [free_port()])
    try:
        await cluster.start()
        yield cluster
    finally:
        await cluster.stop()


async def liveness(stack: Stack, runs: int) -> list[Figure]:
    async with two_hosts(stack) as cluster:
        killed, stopped = [], []
        for _ in range(ROUNDS):
            killed.append(await _until_silent(cluster, lambda: _kill(cluster)))
            await cluster.restart("hostB")
            stopped.append(await _until_silent(cluster, lambda: cluster.terminate("hostB", wait=False)))
            await cluster.host("hostB").worker.wait_ended()
            await cluster.restart("hostB")
        api = cluster.api(0)
        for path in ("/healthz", "/readyz", "/api/hosts"):  # first-use costs
            await api.get(path)
        health = Latency.of([await timed(lambda: api.get("/healthz")) for _ in range(runs)])
        ready = Latency.of([await timed(lambda: api.get("/readyz")) for _ in range(runs)])
        listed = Latency.of([await timed(lambda: api.get("/api/hosts")) for _ in range(runs)])
    refresh, select = await _refresh_cost(stack, runs)
    slowest = max(killed)
    return [
        Figure("a SIGKILLed host said silent (GET /api/hosts), seconds after the kill",
               ", ".join(f"{seconds:.1f} s" for seconds in killed),
               "SIGTERMed: " + ", ".join(f"{seconds:.1f} s" for seconds in stopped),
               verdict(slowest <= SILENT_TARGET_S) + f" (target <= {SILENT_TARGET_S:g} s)",
               {"killed_s": [round(seconds, 2) for seconds in killed],
                "stopped_s": [round(seconds, 2) for seconds in stopped]}),
        Figure("GET /api/hosts (2 hosts, 1 API) and /readyz with its hosts' lines, against /healthz",
               f"hosts: {listed}; readyz: {ready}", f"healthz: {health}", "",
               {"hosts": vars(listed), "readyz": vars(ready), "healthz": vars(health)}),
        Figure("a process's refresh of its row (once a second), against SELECT 1",
               str(refresh), f"SELECT 1: {select}", "",
               {"refresh": vars(refresh), "select": vars(select)}),
    ]


async def _kill(cluster: Cluster) -> None:
    cluster.kill("hostB")


async def _until_silent(cluster: Cluster, act: Callable[[], Awaitable[object]]) -> float:
    started = time.monotonic()
    await act()
    while True:
        hosts = (await cluster.api(0).get("/api/hosts")).json()["hosts"]
        if not next(host for host in hosts if host["name"] == "hostB")["alive"]:
            return time.monotonic() - started
        await asyncio.sleep(0.05)


async def _refresh_cost(stack: Stack, runs: int) -> tuple[Latency, Latency]:
    pool = await create_pool(stack.database_url, max_size=2)
    try:
        settings = load_settings(database_url=stack.database_url, host=f"bench-presence-{os.getpid()}",
                                 worktree_base_setting=stack.trees)
        presence = await record_start(pool, settings, "worker", runs_messages=False)
        refresh = [await timed(lambda: record_alive(pool, presence)) for _ in range(runs)]
        select = [await timed(lambda: pool.fetchval("SELECT 1")) for _ in range(runs)]
        await pool.execute("DELETE FROM service_processes WHERE id = $1", presence.id)
    finally:
        await pool.close()
    return Latency.of(refresh), Latency.of(select)
