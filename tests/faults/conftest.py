"""Fault injection on real processes: the worker (and, where the API is what dies, the API) runs as a
process of its own the tests can kill.

It is `isolator worker` with the tests' fault pause installed (tests/faults/paused_worker.py), forked
from an interpreter that imported it once (tests/faults/forked.py)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import AsyncIterator, Iterator

import asyncpg
import httpx
import pytest
from temporalio.client import Client

from api.app import create_app
from isolator.settings import Settings
from tests.faults.forked import ForkedProcess, start_forked

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class WorkerProcess:
    """The worker process (or, with another `program`, the API's) for one test's settings; started,
    killed and restarted at will."""

    settings: Settings
    logs: Path
    process: ForkedProcess | None = None
    starts: int = 0
    extra_env: dict[str, str] = field(default_factory=dict)
    program: str = "tests.faults.paused_worker"
    args: list[str] = field(default_factory=list)
    name: str = "worker"

    def environment(self, **extra: str) -> dict[str, str]:
        settings = self.settings
        return {
            **{key: value for key, value in os.environ.items() if not key.startswith("ISOLATOR_FAULT")},
            "DATABASE_URL": settings.database_url or "",
            "TEMPORAL_ADDRESS": settings.temporal_address,
            "ISOLATOR_DATA_DIR": str(settings.data_dir),
            "WORKTREE_BASE": str(settings.worktree_base),
            "WORKSPACE_PATH": str(settings.workspace_path),
            "ISOLATOR_HOST": settings.host,
            "ISOLATOR_TASK_QUEUE": settings.task_queue,
            "ISOLATOR_TEST_ADAPTER": "1",
            "WARM_WORKTREES": str(settings.warm_worktrees),
            "EAGER_START": str(settings.eager_start).lower(),
            "WORKER_DRAIN_SECONDS": str(settings.worker_drain_seconds),
            "SANDBOX_WRITABLE_PATHS": settings.sandbox_writable_paths or "",
            "SANDBOX_READABLE_PATHS": settings.sandbox_readable_paths or "",
            **self.extra_env,
            **extra,
        }

    def start(self, **extra: str) -> None:
        self.starts += 1
        log = self.logs / f"{self.name}-{self.starts}.log"
        self.process = start_forked(self.program, self.args, self.environment(**extra), log, ROOT)

    def kill(self) -> None:
        """SIGKILL: no shutdown, no cleanup, as when a machine loses power."""
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()

    def log_text(self) -> str:
        return "\n".join(path.read_text(errors="replace") for path in sorted(self.logs.glob(f"{self.name}-*.log")))


@pytest.fixture
def worker(settings: Settings, tmp_path: Path) -> Iterator[WorkerProcess]:
    logs = tmp_path / "logs"
    logs.mkdir()
    process = WorkerProcess(settings, logs)
    yield process
    process.stop()


def api_process(settings: Settings, logs: Path, port: int, **extra_env: str) -> WorkerProcess:
    """`isolator api` as a process of its own on `port`, that a test can kill mid-request."""
    return WorkerProcess(settings, logs, extra_env=dict(extra_env), program="tests.faults.paused_api",
                         args=["--port", str(port)], name="api")


async def answering(url: str, process: WorkerProcess, seconds: float = 60) -> None:
    """Until the API process at `url` is ready (its /readyz answers 200)."""
    async with httpx.AsyncClient(base_url=url, timeout=5) as client:
        for _ in range(int(seconds * 10)):
            assert process.process is not None and process.process.poll() is None, process.log_text()[-3000:]
            try:
                if (await client.get("/readyz")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.1)
    raise AssertionError(f"the API did not answer within {seconds} s:\n{process.log_text()[-3000:]}")


@pytest.fixture
async def api(settings: Settings, db: asyncpg.Pool, temporal: Client) -> AsyncIterator[httpx.AsyncClient]:
    """The API in this process, with no worker of its own: the work goes to the worker process."""
    transport = httpx.ASGITransport(app=create_app(settings, temporal=temporal, pool=db))
    async with httpx.AsyncClient(transport=transport, base_url="http://isolator.test", timeout=60) as client:
        yield client


async def wait_for(path: Path, process: WorkerProcess, seconds: float = 60) -> None:
    for _ in range(int(seconds * 20)):
        if path.exists():
            return
        assert process.process is not None and process.process.poll() is None, process.log_text()[-3000:]
        await asyncio.sleep(0.05)
    raise AssertionError(f"{path.name} did not appear within {seconds} s:\n{process.log_text()[-3000:]}")


async def register(api: httpx.AsyncClient, path: Path) -> dict:
    response = await api.post("/api/codebases", json={"path": str(path)})
    assert response.status_code in (200, 201), response.text
    return response.json()
