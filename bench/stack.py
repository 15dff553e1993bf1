"""The stack a benchmark runs against, in the production shape: separate worker and API processes.

PostgreSQL and Temporal are the embedded ones of `isolator dev` unless given (`--database-url`,
`--temporal-address`). The GitHub and Slack APIs are the local fakes of the test suite, so no
benchmark reaches the internet. Everything lives in one scratch folder, removed afterwards.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import uuid
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import AsyncIterator

import httpx
import psutil
from temporalio.client import Client

from isolator.payloads import connect
from migrations.runner import apply_migrations
from tests.fakes.anthropic_api import FakeAnthropicApi
from tests.fakes.github_api import TOKEN as GITHUB_TOKEN
from tests.fakes.github_api import FakeGitHub
from tests.fakes.slack_api import BOT_TOKEN as SLACK_TOKEN
from tests.fakes.slack_api import FakeSlack
from tests.fakes.slack_socket import APP_TOKEN as SLACK_APP_TOKEN
from tests.fakes.slack_socket import FakeSlackSocket
from tests.platforms.github import SECRET as GITHUB_SECRET
from tests.platforms.slack import SIGNING_SECRET as SLACK_SECRET
from workers.postgres import start_embedded_postgres
from workers.temporal_server import start_dev_server

ROOT = Path(__file__).resolve().parent.parent
ISOLATOR = Path(sys.executable).parent / "isolator"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class Stack:
    work: Path  # logs and PostgreSQL's state (the dev server the bench starts keeps its own in memory)
    trees: Path  # the git repositories, the service's workspace and worktrees, and the raw worktrees
    api: httpx.AsyncClient
    temporal: Client
    database_url: str
    task_queue: str  # the service's shared queue
    baseline_queue: str  # where BareWorkflow runs
    baseline_http: httpx.AsyncClient  # POST /bare: the bare workflow behind the same HTTP hop, in its own process
    host: str
    github: FakeGitHub
    slack: FakeSlack
    processes: dict[str, subprocess.Popen]
    model: FakeAnthropicApi  # the model API of the real Claude Code runs (ANTHROPIC_BASE_URL)
    slack_socket: FakeSlackSocket  # Slack's Socket Mode side, which the API process connects to

    def memory(self) -> dict[str, psutil.Process]:
        return {name: psutil.Process(process.pid) for name, process in self.processes.items()}


def _spawn(name: str, command: list[str], env: dict[str, str], work: Path) -> subprocess.Popen:
    log = (work / f"{name}.log").open("ab")
    return subprocess.Popen(command, env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)


async def _ready(api: httpx.AsyncClient, processes: dict[str, subprocess.Popen], work: Path) -> None:
    for _ in range(600):
        for name, process in processes.items():
            if process.poll() is not None:
                tail = (work / f"{name}.log").read_text(errors="replace")[-2000:]
                raise SystemExit(f"bench: `{name}` exited with {process.returncode}:\n{tail}")
        try:
            if (await api.get("/readyz")).status_code == 200:
                return
        except httpx.TransportError:
            pass
        await asyncio.sleep(0.1)
    raise SystemExit("bench: the API did not become ready within 60 s")


async def _answering(http: httpx.AsyncClient) -> None:
    for _ in range(600):
        try:
            await http.get("/")
            return
        except httpx.TransportError:
            await asyncio.sleep(0.1)
    raise SystemExit("bench: the baseline's HTTP server did not answer within 60 s")


def _stop(processes: dict[str, subprocess.Popen]) -> None:
    for process in processes.values():
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
    for process in processes.values():
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def model_environment(model: FakeAnthropicApi) -> dict[str, str]:
    """What points Claude Code at the fake model API, and only there."""
    return {"ANTHROPIC_BASE_URL": model.url, "ANTHROPIC_API_KEY": "sk-ant-bench",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}


@asynccontextmanager
async def running_stack(work: Path, trees: Path, database_url: str | None,
                        temporal_address: str | None) -> AsyncIterator[Stack]:
    async with AsyncExitStack() as cleanup:
        github, slack, model = FakeGitHub(), FakeSlack(), FakeAnthropicApi()
        for fake in (github, slack, model):
            await fake.start()
            cleanup.push_async_callback(fake.stop)
        slack_socket = FakeSlackSocket(slack)
        await slack_socket.start()
        cleanup.push_async_callback(slack_socket.stop)
        if database_url is None:
            postgres = await start_embedded_postgres(work / "postgres")
            cleanup.push_async_callback(postgres.stop)
            database_url = postgres.url
        if temporal_address is None:
            temporal = await start_dev_server(port=free_port(), ui_port=None, db_file=None,
                                              log_path=work / "temporal.log")
            cleanup.push_async_callback(temporal.stop)
            temporal_address = temporal.address
        await apply_migrations(database_url)

        run = uuid.uuid4().hex[:8]  # own queues and host, so a given stack's other workers are not measured
        # This machine's own host name: the API then hosts a worker and starts messages eagerly (docs/warm.md);
        # the queues (and with them the host's queue) are the run's own.
        host, queue, baseline_queue = socket.gethostname(), f"bench-isolation-{run}", f"bench-bare-{run}"
        port, baseline_port = free_port(), free_port()
        env = {
            **{key: value for key, value in os.environ.items() if not key.startswith(("GITHUB_", "SLACK_"))},
            "DATABASE_URL": database_url, "TEMPORAL_ADDRESS": temporal_address, "ISOLATOR_DATA_DIR": str(work / "data"),
            "WORKTREE_BASE": str(trees / "worktrees"), "WORKSPACE_PATH": str(trees / "workspace"),
            "ISOLATOR_HOST": host, "ISOLATOR_TASK_QUEUE": queue, "BENCH_QUEUE": baseline_queue,
            "BENCH_BASELINE_PORT": str(baseline_port),
            "ISOLATOR_TEST_ADAPTER": "1", "MAX_WORKTREES_PER_CODEBASE": "100000",
            # Today's create in every case but the warm pool's, whose codebases set their own pool.
            "WARM_WORKTREES": "0",
            # The bench's agents note when they run there: the only folder of the bench the sandbox lets them write.
            "SANDBOX_WRITABLE_PATHS": str(work / "records"),
            # Their set-ups run this Python, as an operator lists their toolchain.
            "SANDBOX_READABLE_PATHS": ":".join(dict.fromkeys([sys.prefix, sys.base_prefix])),
            "GITHUB_WEBHOOK_SECRET": GITHUB_SECRET, "GITHUB_TOKEN": GITHUB_TOKEN, "GITHUB_API_URL": github.api_url,
            "SLACK_SIGNING_SECRET": SLACK_SECRET, "SLACK_BOT_TOKEN": SLACK_TOKEN, "SLACK_API_URL": slack.api_url,
            "SLACK_APP_TOKEN": SLACK_APP_TOKEN,  # the API process also holds Slack's Socket Mode connection
            **model_environment(model),
        }
        processes = {
            "worker": _spawn("worker", [str(ISOLATOR), "worker"], env, work),
            "api": _spawn("api", [str(ISOLATOR), "api", "--host", "127.0.0.1", "--port", str(port)], env, work),
            "baseline-worker": _spawn("baseline-worker", [sys.executable, "-m", "bench.baseline", "worker"], env, work),
            "baseline-api": _spawn("baseline-api", [sys.executable, "-m", "bench.baseline", "http"], env, work),
        }
        cleanup.callback(_stop, processes)
        # Idle connections are let go before the server's keep-alive (uvicorn: 5 s) closes them: a request
        # sent on one the server is closing at that moment ends in httpx.ReadError (runs Z and AE).
        limits = httpx.Limits(max_connections=200, max_keepalive_connections=200, keepalive_expiry=2.0)
        api = await cleanup.enter_async_context(
            httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=120, limits=limits)
        )
        baseline_http = await cleanup.enter_async_context(
            httpx.AsyncClient(base_url=f"http://127.0.0.1:{baseline_port}", timeout=120, limits=limits)
        )
        await _ready(api, processes, work)
        await _answering(baseline_http)
        client = await connect(temporal_address)
        yield Stack(work, trees, api, client, database_url, queue, baseline_queue, baseline_http, host, github, slack,
                    processes, model, slack_socket)
