"""Shared fixtures: one real PostgreSQL and one real Temporal dev server for the session;
per test, fresh tables, a worktree base, workers on their own task queues, and the API."""

from __future__ import annotations

import asyncio
import random
import socket
import sys
import uuid
from collections.abc import Collection
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import AsyncIterator

import asyncpg
import httpx
import pytest
from temporalio.client import Client
from temporalio.worker import Interceptor

from activities.database import create_pool
from api.app import create_app
from isolator.payloads import connect
from isolator.settings import Settings, load_settings
from migrations.runner import apply_migrations
from tests.gitrepos import make_repo
from tests.stuck_workflows import open_workflows_report, terminate_open_workflows
from workers.postgres import EmbeddedPostgres, start_embedded_postgres
from workers.temporal_server import TemporalDevServer, start_dev_server
from workers.worker import running_workers

# A message's resolution comes in seconds; past this, the test fails with what its workflows wait on.
SAY_SECONDS = 120

TABLES = ("outbound_messages, conversations, isolation_environments, codebases, discord_interactions, "
          "agent_sessions, refusal_replies, dashboard_sessions, conversation_allow_rules, service_processes")


# The longest tests start first, so that none starts late and ends the run alone: worksteal shares out
# what is left between the test processes (a file here takes 40 s to 5 min of test time).
LONGEST_FIRST = ("tests/workflows/test_agent_drivers.py", "tests/faults/", "tests/workers/test_dev_command.py",
                 "tests/workflows/test_approvals.py", "tests/workflows/test_ready_to_work.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: not item.nodeid.startswith(LONGEST_FIRST))  # stable: the rest keep their order


def free_port(taken: Collection[int] = ()) -> int:
    """A free port for a server a test starts, below the kernel's ephemeral range: the port the
    kernel would pick (bind to 0) is one an outgoing connection may take before the server binds it."""
    lowest_ephemeral = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    for _ in range(1000):
        port = random.randrange(10000, max(lowest_ephemeral, 10001))
        with socket.socket() as probe, suppress(OSError):
            probe.bind(("127.0.0.1", port))
            if port not in taken:
                return port
    raise AssertionError("no free port below the ephemeral range")


@pytest.fixture(scope="session")
async def postgres(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[EmbeddedPostgres]:
    server = await start_embedded_postgres(tmp_path_factory.mktemp("pg") / "data")
    await apply_migrations(server.url)
    yield server
    await server.stop()


@pytest.fixture(scope="session")
async def temporal_server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[TemporalDevServer]:
    logs = tmp_path_factory.mktemp("temporal")
    server = await start_dev_server(port=free_port(), ui_port=None, db_file=None, log_path=logs / "temporal.log")
    yield server
    await server.stop()


@pytest.fixture(scope="session")
async def temporal(temporal_server: TemporalDevServer) -> Client:
    return await connect(temporal_server.address)


@pytest.fixture(scope="session")
async def pool(postgres: EmbeddedPostgres) -> AsyncIterator[asyncpg.Pool]:
    pool = await create_pool(postgres.url, max_size=20)
    yield pool
    await pool.close()


@pytest.fixture
async def db(pool: asyncpg.Pool) -> asyncpg.Pool:
    """The shared pool, on empty tables."""
    for attempt in range(5):
        try:
            await pool.execute(f"TRUNCATE {TABLES} RESTART IDENTITY CASCADE")
            return pool
        except asyncpg.DeadlockDetectedError:
            # A process the last test killed (a worker in a fault test) may still be ending its last
            # transaction on these tables; PostgreSQL aborts one side of the deadlock: ours, so try again.
            if attempt == 4:
                raise
    return pool


@pytest.fixture
def settings(tmp_path: Path, postgres: EmbeddedPostgres, temporal_server: TemporalDevServer) -> Settings:
    """Settings for one test: its own folders, host name and task queues."""
    return load_settings(
        database_url=postgres.url,
        temporal_address=temporal_server.address,
        data_dir=tmp_path / "data",
        worktree_base_setting=tmp_path / "worktrees",
        workspace_path_setting=tmp_path / "workspace",
        host=f"host-{uuid.uuid4().hex[:8]}",
        task_queue=f"isolation-{uuid.uuid4().hex[:8]}",
        test_adapter=True,
        # The in-process clients' base URL (http://isolator.test) names a host the API answers to.
        allowed_hosts="isolator.test",
        # The test agents and set-up commands record what they did in files of the test's own folder;
        # the service's folders in it stay hidden from them (tests/security/test_sandbox.py).
        sandbox_writable_paths=str(tmp_path),
        # Set-up commands run this Python (`sys.executable`): the tests' toolchain, as an operator lists theirs.
        sandbox_readable_paths=":".join(dict.fromkeys([sys.prefix, sys.base_prefix])),
        # The warm pool's background refills and eager starts would change what unrelated tests see; their
        # own tests (tests/workflows/test_warm_pool.py, tests/workers/test_eager_start.py) turn them on.
        warm_worktrees=0,
        eager_start=False,
        # A test's end stops the runs still going at once, as before drains (tests/hosts/test_drain.py drains).
        worker_drain_seconds=0,
    )


@dataclass
class Stack:
    """A running service: workers plus the API, called in-process."""

    api: httpx.AsyncClient
    settings: Settings
    db: asyncpg.Pool
    temporal: Client
    tmp_path: Path

    async def register(self, path: Path, **fields: str) -> dict:
        response = await self.api.post("/api/codebases", json={"path": str(path), **fields})
        assert response.status_code in (200, 201), response.text
        return response.json()

    async def say(self, conversation: str, text: str = "hello", **fields: str) -> dict:
        asked = self.api.post(
            "/test/message", params={"wait": "true"}, json={"conversationId": conversation, "message": text, **fields}
        )
        try:
            response = await asyncio.wait_for(asked, SAY_SECONDS)
        except TimeoutError:
            report = await open_workflows_report(self.temporal, self.settings.task_queue)
            raise AssertionError(f"{text!r} in {conversation} got no resolution in {SAY_SECONDS} s:\n{report}") from None
        assert response.status_code == 200, response.text
        return response.json()

    async def replies(self, conversation: str) -> list[str]:
        response = await self.api.get(f"/test/messages/{conversation}")
        assert response.status_code == 200, response.text
        return [item["message"] for item in response.json()["messages"]]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> object:
    report = yield
    if report.when == "call":
        item.stash[CALL_FAILED] = report.failed  # read by `stack`'s teardown
    return report


CALL_FAILED = pytest.StashKey[bool]()


@pytest.fixture
def worker_interceptors() -> list[Interceptor]:
    """Added to the workers' own: a test that holds a step overrides it (tests/faults/paused_worker.py)."""
    return []


@pytest.fixture
async def stack(settings: Settings, db: asyncpg.Pool, temporal: Client, tmp_path: Path,
                worker_interceptors: list[Interceptor], request: pytest.FixtureRequest) -> AsyncIterator[Stack]:
    app = create_app(settings, temporal=temporal, pool=db)
    async with running_workers(temporal, db, settings, worker_interceptors):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://isolator.test", timeout=60) as api:
            yield Stack(api=api, settings=settings, db=db, temporal=temporal, tmp_path=tmp_path)
        if request.node.stash.get(CALL_FAILED, False):
            # A failed test may leave a local activity waiting on a workflow only these workers serve
            # (a run's update): Temporal waits for local activities at a stop, so it would never end.
            await terminate_open_workflows(temporal, settings.task_queue)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repos" / "project")
