"""`isolator worker` and `isolator api` as real subprocesses, stopped as a service manager (SIGTERM)
or a person at the terminal (Ctrl-C: SIGINT to the process group) stops them: each ends cleanly, exit
code 0, with nothing fatal in its output. (`isolator dev`: tests/workers/test_dev_command.py.)"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid
from contextlib import suppress
from pathlib import Path
from typing import Callable, Iterator

import httpx
import pytest

from isolator.settings import Settings
from tests.dev_process import free_ports
from workers.postgres import EmbeddedPostgres
from workers.temporal_server import TemporalDevServer

READY_TIMEOUT = 180.0  # upper bounds: a loaded 2-core machine takes about 10 s to start and 3 s to stop
STOP_TIMEOUT = 60.0


class Process:
    def __init__(self, args: list[str], log: Path, env: dict[str, str]) -> None:
        self.log = log
        ours = {field.validation_alias.choices[0] for field in Settings.model_fields.values()}
        environment = {key: value for key, value in os.environ.items() if key not in ours}
        with open(log, "wb") as out:
            self.process = subprocess.Popen(
                [str(Path(sys.executable).parent / "isolator"), *args], env={**environment, **env},
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            )

    def text(self) -> str:
        return self.log.read_text(errors="replace")

    async def ready(self, condition: Callable[[], bool]) -> None:
        deadline = time.monotonic() + READY_TIMEOUT
        while not condition():
            if self.process.poll() is not None:
                pytest.fail(f"exited with {self.process.returncode}:\n{self.text()}")
            if time.monotonic() > deadline:
                pytest.fail(f"not ready within {READY_TIMEOUT} s:\n{self.text()}")
            await asyncio.sleep(0.1)

    async def stop(self, sig: signal.Signals) -> None:
        if sig == signal.SIGINT:
            os.killpg(self.process.pid, sig)
        else:
            self.process.send_signal(sig)
        try:
            code = await asyncio.to_thread(self.process.wait, STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            pytest.fail(f"did not stop within {STOP_TIMEOUT} s after {sig.name}:\n{self.text()}")
        assert code == 0, f"ended with {code} after {sig.name}:\n{self.text()}"
        assert "Fatal Python error" not in self.text() and "Traceback" not in self.text(), self.text()

    def kill(self) -> None:
        if self.process.poll() is None:
            with suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


@pytest.fixture
def start(tmp_path: Path, postgres: EmbeddedPostgres, temporal_server: TemporalDevServer) -> Iterator[Callable[..., Process]]:
    started: list[Process] = []

    def start(*args: str) -> Process:
        env = dict(DATABASE_URL=postgres.url, TEMPORAL_ADDRESS=temporal_server.address,
                   ISOLATOR_HOST=f"host-{uuid.uuid4().hex[:8]}", ISOLATOR_TASK_QUEUE=f"isolation-{uuid.uuid4().hex[:8]}",
                   ISOLATOR_DATA_DIR=str(tmp_path / "data"), WORKTREE_BASE=str(tmp_path / "worktrees"))
        started.append(Process(list(args), tmp_path / f"process-{len(started)}.log", env))
        return started[-1]

    yield start
    for process in started:
        process.kill()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
async def test_a_worker_stops_cleanly(start: Callable[..., Process], sig: signal.Signals) -> None:
    worker = start("worker")
    await worker.ready(lambda: "worker on" in worker.text())
    await worker.stop(sig)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
async def test_the_api_stops_cleanly(start: Callable[..., Process], sig: signal.Signals) -> None:
    port, = free_ports(1)
    api = start("api", "--host", "127.0.0.1", "--port", str(port))

    def answers() -> bool:
        try:
            return httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code == 200
        except httpx.TransportError:
            return False

    await api.ready(answers)
    await api.stop(sig)
