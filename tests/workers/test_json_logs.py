"""LOG_FORMAT=json (docs/observability.md, "Logs"): `isolator worker` and `isolator api` as real
processes write one JSON object per line, each with its time, level, logger and message, and the ids
of the step that logged it: an activity's line names its host and task queue (routing is read from the
logs), its workflow, conversation, environment, agent run and trace. A user's mistake (a refused
registration, an unknown command) is one line at INFO. The text format names host and queue too."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import uuid
from contextlib import suppress
from pathlib import Path
from typing import AsyncIterator, Callable, Iterator

import asyncpg
import httpx
import pytest

from isolator.settings import Settings
from tests.agents import command
from tests.conftest import free_port
from tests.fakes.otlp_traces import OtlpTraces
from workers.postgres import EmbeddedPostgres
from workers.temporal_server import TemporalDevServer


class Process:
    def __init__(self, args: list[str], log: Path, env: dict[str, str]) -> None:
        self.log = log
        ours = {field.validation_alias.choices[0] for field in Settings.model_fields.values()}
        environment = {key: value for key, value in os.environ.items() if key not in ours and not key.startswith("OTEL_")}
        with open(log, "wb") as out:
            self.process = subprocess.Popen(
                [str(Path(sys.executable).parent / "isolator"), *args], env={**environment, **env},
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            )

    def lines(self) -> list[str]:
        return [line for line in self.log.read_text(errors="replace").splitlines() if line.strip()]

    async def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        assert await asyncio.to_thread(self.process.wait, 60) == 0, "\n".join(self.lines()[-30:])

    def kill(self) -> None:
        if self.process.poll() is None:
            with suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


@pytest.fixture
async def traces() -> AsyncIterator[OtlpTraces]:
    server = OtlpTraces()
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
def start(tmp_path: Path, postgres: EmbeddedPostgres, temporal_server: TemporalDevServer,
          traces: OtlpTraces, db: asyncpg.Pool) -> Iterator[Callable[..., Process]]:
    started: list[Process] = []
    common = dict(DATABASE_URL=postgres.url, TEMPORAL_ADDRESS=temporal_server.address,
                  ISOLATOR_HOST=f"host-{uuid.uuid4().hex[:8]}", ISOLATOR_TASK_QUEUE=f"isolation-{uuid.uuid4().hex[:8]}",
                  ISOLATOR_DATA_DIR=str(tmp_path / "data"), WORKTREE_BASE=str(tmp_path / "worktrees"),
                  WORKSPACE_PATH=str(tmp_path / "workspace"), ISOLATOR_TEST_ADAPTER="1", EAGER_START="false",
                  WARM_WORKTREES="0", AGENT_COMMAND=command("reporter"), SANDBOX_WRITABLE_PATHS=str(tmp_path),
                  SANDBOX_READABLE_PATHS=":".join(dict.fromkeys([sys.prefix, sys.base_prefix])), **traces.environment())

    def start(*args: str, **env: str) -> Process:
        started.append(Process(list(args), tmp_path / f"{args[0]}-{len(started)}.log", {**common, **env}))
        return started[-1]

    yield start
    for process in started:
        process.kill()


async def answering(url: str, process: Process) -> None:
    async with httpx.AsyncClient(base_url=url, timeout=5) as client:
        for _ in range(1800):
            assert process.process.poll() is None, "\n".join(process.lines()[-30:])
            with suppress(httpx.TransportError):
                if (await client.get("/readyz")).status_code == 200:
                    return
            await asyncio.sleep(0.1)
    raise AssertionError("the API did not answer")


async def run_ended(api: httpx.AsyncClient, run_id: str) -> dict:
    for _ in range(1200):
        run = (await api.get(f"/api/runs/{run_id}")).json()
        if run["status"] not in ("queued", "running"):
            return run
        await asyncio.sleep(0.1)
    raise AssertionError(f"run {run_id}: {run}")


async def test_every_line_of_a_message_is_json_with_its_step_s_ids(
    start: Callable[..., Process], repo: Path, tmp_path: Path
) -> None:
    worker = start("worker", LOG_FORMAT="json")
    port = free_port()
    api_process = start("api", "--port", str(port), LOG_FORMAT="json")
    url = f"http://127.0.0.1:{port}"
    await answering(url, api_process)
    async with httpx.AsyncClient(base_url=url, timeout=120) as api:
        assert (await api.post("/api/codebases", json={"path": str(repo)})).status_code in (200, 201)
        created = (await api.post("/test/message", params={"wait": "true"},
                                  json={"conversationId": "json-1", "message": "add answer.txt"})).json()["result"]
        run = await run_ended(api, created["agentRunId"])
        assert run["status"] == "done" and run["trace_id"]
        refused = await api.post("/api/codebases", json={"path": str(repo / "no-such-folder")})
        assert refused.status_code in (400, 404, 422), refused.text
        await api.post("/test/message", params={"wait": "true"}, json={"conversationId": "json-1", "message": "/frobnicate"})
    await api_process.stop()
    await worker.stop()

    lines = [(process, json.loads(line)) for process in (worker, api_process) for line in process.lines()]
    assert all({"time", "level", "logger", "message"} <= set(line) for _, line in lines), lines
    steps = [line for _, line in lines if line.get("activity")]
    assert steps and all(line["host"] and line["task_queue"] and line["workflow_id"] and line["workflow_run_id"]
                         for line in steps), steps
    agent = next(line for line in steps if line["activity"] == "run_agent" and line["logger"] == "isolator.steps")
    assert agent["task_queue"].endswith("/agents") and agent["run_id"] == created["agentRunId"], agent
    assert agent["conversation"] == "test:json-1" and agent["environment_id"] == created["environmentId"], agent
    assert agent["codebase_id"] and agent["trace_id"] == run["trace_id"], agent
    assert agent["message"].startswith("run_agent ran in "), agent
    mistakes = [line for _, line in lines if "refused:" in line["message"] and "registration" in line["message"]]
    mistakes += [line for _, line in lines if line["message"].startswith("unknown command /frobnicate")]
    assert len(mistakes) == 2 and all(line["level"] == "INFO" and "{'" not in line["message"] for line in mistakes), \
        mistakes
    requests = [line for process, line in lines if process is api_process and line["logger"] == "uvicorn.access"]
    assert requests, "the API's request lines are JSON too"


async def test_text_lines_of_an_activity_name_its_host_and_queue(
    start: Callable[..., Process], repo: Path
) -> None:
    worker = start("worker")
    port = free_port()
    api_process = start("api", "--port", str(port))
    url = f"http://127.0.0.1:{port}"
    await answering(url, api_process)
    async with httpx.AsyncClient(base_url=url, timeout=120) as api:
        assert (await api.post("/api/codebases", json={"path": str(repo)})).status_code in (200, 201)
        created = (await api.post("/test/message", params={"wait": "true"},
                                  json={"conversationId": "text-1", "message": "add answer.txt"})).json()["result"]
        assert (await run_ended(api, created["agentRunId"]))["status"] == "done"
    await api_process.stop()
    await worker.stop()
    ran = [line for line in worker.lines() if " isolator.steps: run_agent ran in " in line]
    assert len(ran) == 1 and " [host=host-" in ran[0] and "/agents workflow=" in ran[0], ran
