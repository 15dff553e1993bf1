"""`make_cluster` starts a deployment of several hosts and APIs (tests/hosts/cluster.py) on the session's
PostgreSQL (its tables emptied) and Temporal; `cluster` is the usual one: hostA, hostB, hostC and two APIs."""

from __future__ import annotations

from pathlib import Path
from typing import AsyncIterator, Awaitable, Callable

import asyncpg
import pytest
from temporalio.client import Client

from tests.conftest import free_port
from tests.hosts.cluster import Cluster
from workers.postgres import EmbeddedPostgres
from workers.temporal_server import TemporalDevServer

HOSTS = ["hostA", "hostB", "hostC"]
MakeCluster = Callable[..., Awaitable[Cluster]]


@pytest.fixture
async def make_cluster(tmp_path: Path, postgres: EmbeddedPostgres, temporal_server: TemporalDevServer,
                       temporal: Client, db: asyncpg.Pool) -> AsyncIterator[MakeCluster]:
    """`await make_cluster(hosts=[...], apis=2, env={...}, host_env={...}, api_env=[...])`: started and
    ready; stopped at the test's end."""
    made: list[Cluster] = []

    async def make(hosts: list[str] = HOSTS, apis: int = 2, **options: object) -> Cluster:
        ports: list[int] = []
        for _ in range(apis):
            ports.append(free_port(ports))
        cluster = Cluster(tmp_path / f"cluster-{len(made)}", postgres.url, temporal_server.address, temporal,
                          list(hosts), apis, ports, **options)  # type: ignore[arg-type]
        made.append(cluster)
        await cluster.start()
        return cluster

    yield make
    for cluster in made:
        await cluster.stop()


@pytest.fixture
async def cluster(make_cluster: MakeCluster) -> Cluster:
    return await make_cluster()
