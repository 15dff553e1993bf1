"""Several worker hosts on one machine: N `isolator worker` processes, each with its own ISOLATOR_HOST, data
folder, workspace and worktree base, and M `isolator api` processes, against one Temporal and one
PostgreSQL, with the test adapter on.

The processes are forked from the fault tests' fork server (tests/faults/forked.py): the workers are
tests/faults/paused_worker.py (`isolator worker`, plus the pause a test may ask for with
ISOLATOR_FAULT_PAUSE in `host_env`), the APIs tests/hosts/api_program.py (`isolator api` as it ships: its
eager worker when EAGER_START and ISOLATOR_HOST allow). The workers start first and the APIs once every
worker polls, as a deployment is rolled out. A test kills (SIGKILL), stops (SIGTERM) and restarts any
host's worker by name, registers codebases on a chosen host, and talks through a chosen API.
"""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import httpx
from temporalio.api.enums.v1 import TaskQueueKind, TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client

from tests.hosts.process import Process

WORKER_PROGRAM = "tests.faults.paused_worker"
API_PROGRAM = "tests.hosts.api_program"


@dataclass
class Host:
    """A worker host: its name (ISOLATOR_HOST), its folders and its worker process."""

    name: str
    folder: Path
    worker: Process

    @property
    def data_dir(self) -> Path:
        return self.folder / "data"

    @property
    def worktree_base(self) -> Path:
        return self.folder / "worktrees"

    @property
    def workspace(self) -> Path:
        return self.folder / "workspace"


@dataclass
class Api:
    """An API process and an HTTP client to it."""

    name: str
    url: str
    process: Process
    http: httpx.AsyncClient


class Cluster:
    """N hosts and M APIs of one deployment (one shared task queue of the test's own).

    `env` goes to every process; `host_env[name]` to that host's worker; `api_env[i]` to the i-th API
    (its ISOLATOR_HOST is the first host's, its EAGER_START false unless given)."""

    def __init__(self, folder: Path, database_url: str, temporal_address: str, temporal: Client,
                 hosts: list[str], apis: int, ports: list[int], env: dict[str, str] | None = None,
                 host_env: dict[str, dict[str, str]] | None = None, api_env: list[dict[str, str]] | None = None) -> None:
        self.folder, self.temporal, self.database_url = folder, temporal, database_url
        self.task_queue = f"isolation-{uuid.uuid4().hex[:8]}"
        self.logs = folder / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        common = {
            **{key: value for key, value in os.environ.items() if not key.startswith("ISOLATOR_FAULT")},
            "DATABASE_URL": database_url, "TEMPORAL_ADDRESS": temporal_address,
            "ISOLATOR_TASK_QUEUE": self.task_queue, "ISOLATOR_TEST_ADAPTER": "1",
            "WARM_WORKTREES": "0", "EAGER_START": "false",
            # As the tests' settings: the agents write in the test's folder, set-ups run this Python.
            "SANDBOX_WRITABLE_PATHS": str(folder),
            "SANDBOX_READABLE_PATHS": ":".join(dict.fromkeys([sys.prefix, sys.base_prefix])),
            **(env or {}),
        }
        self.hosts: dict[str, Host] = {}
        for name in hosts:
            place = folder / "hosts" / name
            process_env = {**common, "ISOLATOR_HOST": name, "ISOLATOR_DATA_DIR": str(place / "data"),
                           "WORKTREE_BASE": str(place / "worktrees"), "WORKSPACE_PATH": str(place / "workspace"),
                           **(host_env or {}).get(name, {})}
            self.hosts[name] = Host(name, place, Process(f"worker-{name}", WORKER_PROGRAM, process_env, self.logs))
        self.apis: list[Api] = []
        for index in range(apis):
            place, port = folder / "apis" / str(index), ports[index]
            process_env = {**common, "ISOLATOR_HOST": hosts[0], "ISOLATOR_DATA_DIR": str(place / "data"),
                           "WORKTREE_BASE": str(place / "worktrees"), "WORKSPACE_PATH": str(place / "workspace"),
                           **((api_env or [])[index] if index < len(api_env or []) else {})}
            url = f"http://127.0.0.1:{port}"
            process = Process(f"api-{index}", API_PROGRAM, process_env, self.logs, args=["--port", str(port)])
            self.apis.append(Api(f"api-{index}", url, process, httpx.AsyncClient(base_url=url, timeout=120)))

    # processes

    async def start(self) -> None:
        for host in self.hosts.values():
            host.worker.start()
        await asyncio.gather(*(self.worker_ready(name) for name in self.hosts))
        for api in self.apis:
            api.process.start()
        await asyncio.gather(*(self.api_ready(index) for index in range(len(self.apis))))

    async def stop(self) -> None:
        for api in self.apis:
            await api.http.aclose()
            api.process.stop()
        for host in self.hosts.values():
            host.worker.stop()

    def host(self, name: str) -> Host:
        return self.hosts[name]

    def host_queue(self, name: str) -> str:
        return f"{self.task_queue}@{name}"

    def kill(self, name: str) -> None:
        """SIGKILL the host's worker."""
        self.hosts[name].worker.kill()

    async def terminate(self, name: str, wait: bool = True, seconds: float = 60) -> int | None:
        """SIGTERM the host's worker; with `wait`, until it has exited (its exit code)."""
        worker = self.hosts[name].worker
        worker.terminate()
        return await worker.wait_ended(seconds) if wait else None

    async def restart(self, name: str, **extra_env: str) -> None:
        """The host's worker started again (after a kill or a stop), once it polls its queue."""
        worker = self.hosts[name].worker
        if worker.alive:
            worker.kill()
        worker.start(**extra_env)
        await self.worker_ready(name)

    async def worker_ready(self, name: str, seconds: float = 60) -> None:
        """Until this start of the host's worker polls the host's queue (Temporal lists its pid's poller)."""
        worker = self.hosts[name].worker
        request = DescribeTaskQueueRequest(
            namespace=self.temporal.namespace,
            task_queue=TaskQueue(name=self.host_queue(name), kind=TaskQueueKind.TASK_QUEUE_KIND_NORMAL),
            task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
        )
        for _ in range(int(seconds * 10)):
            assert worker.alive, f"{worker.name} exited:\n{worker.log_text()[-3000:]}"
            pollers = (await self.temporal.workflow_service.describe_task_queue(request)).pollers
            if any(poller.identity.startswith(f"{worker.pid}@") for poller in pollers):
                return
            await asyncio.sleep(0.1)
        raise AssertionError(f"{worker.name} did not poll within {seconds} s:\n{worker.log_text()[-3000:]}")

    async def api_ready(self, index: int = 0, seconds: float = 60) -> None:
        api = self.apis[index]
        for _ in range(int(seconds * 10)):
            assert api.process.alive, f"{api.name} exited:\n{api.process.log_text()[-3000:]}"
            try:
                if (await api.http.get("/readyz")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.1)
        raise AssertionError(f"{api.name} was not ready within {seconds} s:\n{api.process.log_text()[-3000:]}")

    def log_text(self) -> str:
        """Every process's log, for an assertion's message."""
        return "\n".join(f"== {p.name}\n{p.log_text()[-3000:]}" for p in self._processes())

    def _processes(self) -> list[Process]:
        return [host.worker for host in self.hosts.values()] + [api.process for api in self.apis]

    # what a user or an operator does

    def api(self, index: int = 0) -> httpx.AsyncClient:
        return self.apis[index].http

    async def register(self, host: str, path: Path | None = None, url: str | None = None, api: int = 0,
                       **fields: str) -> dict:
        """A codebase on `host`, by a checkout's path on that host and/or a clone URL; its view."""
        body = {"host": host, **({"path": str(path)} if path else {}), **({"url": url} if url else {}), **fields}
        response = await self.api(api).post("/api/codebases", json=body)
        assert response.status_code in (200, 201), response.text
        return response.json()

    async def send(self, conversation: str, text: str = "hello", api: int = 0, **fields: str) -> dict:
        """A test-adapter message, answered once its workflow has started (its `workflowId`)."""
        response = await self.api(api).post("/test/message", json={"conversationId": conversation, "message": text,
                                                                    **fields})
        assert response.status_code == 200, response.text
        return response.json()

    async def say(self, conversation: str, text: str = "hello", api: int = 0, **fields: str) -> dict:
        """A test-adapter message, answered once its workflow has ended (`result` holds its resolution)."""
        response = await self.api(api).post("/test/message", params={"wait": "true"},
                                            json={"conversationId": conversation, "message": text, **fields})
        assert response.status_code == 200, response.text
        return response.json()

    async def replies(self, conversation: str, api: int = 0) -> list[str]:
        response = await self.api(api).get(f"/test/messages/{conversation}")
        assert response.status_code == 200, response.text
        return [item["message"] for item in response.json()["messages"]]

    async def replies_when(self, conversation: str, ready: Callable[[list[str]], bool], seconds: float = 60,
                           api: int = 0) -> list[str]:
        """The conversation's replies once `ready` holds for them."""
        replies: list[str] = []
        for _ in range(int(seconds * 20)):
            replies = await self.replies(conversation, api)
            if ready(replies):
                return replies
            await asyncio.sleep(0.05)
        raise AssertionError(f"replies of {conversation}: {replies}\n{self.log_text()}")

    async def reply_containing(self, conversation: str, words: str, seconds: float = 60, api: int = 0) -> str:
        """The first reply of the conversation that contains `words`, waited for."""
        replies = await self.replies_when(conversation, lambda texts: any(words in text for text in texts),
                                          seconds, api)
        return next(text for text in replies if words in text)
