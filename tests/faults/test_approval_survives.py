"""A request for a person's answer survives a SIGKILLed worker, then a SIGKILLed Temporal (docs/approvals.md):
the run that asked ended its turn and the environment's workflow waits holding no process, so the
answer given afterwards, through the API process, resumes the run once. The real Claude Code against
the fake Anthropic API, real worker and API processes, git, PostgreSQL and a restartable Temporal."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import AsyncIterator, Awaitable, Callable, TypeVar

import asyncpg
import httpx
import pytest

from isolator.contracts.approvals import parse_press_value
from isolator.payloads import connect
from isolator.settings import Settings
from tests.agent_clis import claude_binary
from tests.conftest import free_port
from tests.fakes.anthropic_api import FakeAnthropicApi
from tests.fakes.model_api import run, text
from tests.faults.conftest import WorkerProcess, answering, api_process, register
from tests.faults.test_temporal_killed import RestartableTemporal
from workflows.environment import EnvironmentWorkflow

RULES = "ask: Bash(touch:*)"
RESUMED = "approved this call"
Found = TypeVar("Found")


@pytest.fixture
async def restartable(tmp_path: Path) -> AsyncIterator[RestartableTemporal]:
    server = RestartableTemporal(tmp_path)
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
async def model() -> AsyncIterator[FakeAnthropicApi]:
    async with FakeAnthropicApi() as api:
        yield api


async def until(found: Callable[[], Awaitable[Found | None]], what: str, processes: list[WorkerProcess],
                seconds: float = 120) -> Found:
    """`found()` once it finds something, the processes alive meanwhile."""
    for _ in range(int(seconds * 10)):
        for process in processes:
            assert process.process is not None and process.process.poll() is None, \
                f"{process.name} died while waiting for {what}:\n{process.log_text()[-3000:]}"
        if (value := await found()) is not None:
            return value
        await asyncio.sleep(0.1)
    raise AssertionError(f"no {what} within {seconds} s:\n" + "\n".join(p.log_text()[-3000:] for p in processes))


async def press_once_answered(client: httpx.AsyncClient, code: str, processes: list[WorkerProcess],
                              seconds: float = 180) -> httpx.Response:
    """The press, pressed again while the restarted services answer 5xx or not at all. A press whose
    answer was lost may have been taken: its retry then hears that tester already allowed it."""
    lost = False

    async def answered() -> httpx.Response | None:
        nonlocal lost
        try:
            response = await client.post(f"/test/approvals/{code}", json={"choice": "once", "user": "tester"})
        except httpx.TransportError:  # a timeout included
            lost = True
            return None
        if response.status_code >= 500:
            lost = True
            return None
        if response.status_code == 409 and lost and "already allowed by tester" in response.json()["detail"]:
            return response
        assert response.status_code == 200, (response.status_code, response.text)
        return response

    return await until(answered, "answered press", processes, seconds)


def resumed_requests(model: FakeAnthropicApi) -> list[int]:
    """The requests to the model that resume the session with the answer (their last message)."""
    return [index for index, call in enumerate(model.calls)
            if (messages := call.body.get("messages")) and messages[-1].get("role") == "user"
            and RESUMED in json.dumps(messages[-1])]


async def test_an_answer_after_the_worker_and_temporal_were_killed_resumes_the_run_once(
    restartable: RestartableTemporal, model: FakeAnthropicApi, settings: Settings, repo: Path, tmp_path: Path,
    db: asyncpg.Pool,  # on empty tables: the codebase's name is free
) -> None:
    settings = settings.model_copy(update={"temporal_address": f"127.0.0.1:{restartable.port}"})
    logs = tmp_path / "logs"
    logs.mkdir()
    worker = WorkerProcess(settings, logs, extra_env={
        "AGENT": "claude", "AGENT_EXECUTABLE": str(claude_binary()), "ANTHROPIC_BASE_URL": model.url,
        "ANTHROPIC_API_KEY": "sk-ant-test", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "AGENT_APPROVALS": RULES,
    })
    port = free_port()
    api = api_process(settings, logs, port)
    processes = [worker, api]
    talk = f"survives-{uuid.uuid4().hex[:6]}"
    try:
        worker.start()
        api.start()
        await answering(f"http://127.0.0.1:{port}", api)
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            await register(client, repo)
            model.then(run("touch approved.txt"), run("touch approved.txt"), text("Done."))
            sent = await client.post("/test/message", params={"wait": "true"},
                                     json={"conversationId": talk, "message": "touch approved.txt please"})
            assert sent.status_code == 200, sent.text
            result = sent.json()["result"]
            assert result["outcome"] == "created", result
            worktree = Path(result["workingPath"])

            async def request_code() -> str | None:
                messages = (await client.get(f"/test/messages/{talk}")).json()["messages"]
                asked = [item for item in messages if item.get("buttons")]
                pressed = parse_press_value(asked[0]["buttons"][0]["value"]) if asked else None
                return pressed.code if pressed else None

            async def runs() -> list[dict]:
                response = await client.get("/api/runs", params={"conversation": f"test:{talk}"})
                assert response.status_code == 200, response.text
                return list(reversed(response.json()))  # oldest first

            async def waiting() -> dict | None:
                listed = await runs()
                return listed[0] if listed and listed[0]["status"] == "waiting" else None

            code = await until(request_code, "request with buttons", processes)
            await until(waiting, "waiting run", processes)
            environment = (await connect(settings.temporal_address)).get_workflow_handle_for(
                EnvironmentWorkflow.run, f"environment:{result['environmentId']}")

            async def awaiting() -> bool | None:
                return True if (await environment.query(EnvironmentWorkflow.state)).awaiting is not None else None

            await until(awaiting, "the workflow's wait for the answer", processes)
            assert not (worktree / "approved.txt").exists(), "the call waits for the answer"
            calls_before = len(model.calls)

            worker.kill()
            worker.start()
            await until(lambda: _logged(worker, "worker on "), "restarted worker", processes)
            await restartable.kill_and_restart()

            await press_once_answered(client, code, processes)

            async def ended() -> list[dict] | None:
                listed = await runs()
                return listed if len(listed) >= 2 and listed[-1]["status"] not in ("queued", "running") else None

            listed = await until(ended, "continuation run's end", processes)
            assert [run["status"] for run in listed] == ["waiting", "done"], (listed, worker.log_text()[-3000:])
            assert (worktree / "approved.txt").exists(), "allowed, the command ran"
            assert len(resumed_requests(model)) == 1 and resumed_requests(model)[0] >= calls_before, \
                [call.text()[-500:] for call in model.calls]
            answered = next(item for item in (await client.get("/api/approvals")).json() if item["code"] == code)
            assert answered["state"] == "allowed" and answered["answered_by"] == "tester", answered

            again = await client.post(f"/test/approvals/{code}", json={"choice": "once", "user": "tester"})
            assert again.status_code == 409 and "already" in again.json()["detail"], again.text
    finally:
        api.stop()
        worker.stop()


async def _logged(process: WorkerProcess, line: str) -> bool | None:
    """Whether the process's latest start logged `line`."""
    log = process.logs / f"{process.name}-{process.starts}.log"
    return True if log.exists() and line in log.read_text(errors="replace") else None
