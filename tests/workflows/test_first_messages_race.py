"""Two messages into a new conversation at once: the first records its environment a moment before it
starts the environment's workflow, and the second may find that environment in between. Its run waits
for the workflow and is done as the first one is, never dropped as if the worktree were gone. The first
message is held between its two steps here, as a loaded machine may hold it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import AsyncIterator

import asyncpg
import httpx
import pytest
from temporalio.client import Client

from api.app import create_app
from isolator.settings import Settings
from tests.agent_runs import finished_run
from tests.agents import command
from tests.conftest import CALL_FAILED, Stack
from tests.faults.paused_worker import FaultPause
from tests.stuck_workflows import terminate_open_workflows
from workers.worker import running_workers


@pytest.fixture
def settings(settings: Settings, tmp_path: Path) -> Settings:
    return settings.model_copy(update={"agent_command_line": command("recorder", str(tmp_path / "runs"), "0")})


@pytest.fixture
def pause(tmp_path: Path) -> FaultPause:
    """Every message's start of its environment's workflow waits at `pause.marker` until `pause.release`."""
    return FaultPause("attach_environment", "before", tmp_path / "paused", tmp_path / "release")


@pytest.fixture
async def stack(settings: Settings, db: asyncpg.Pool, temporal: Client, tmp_path: Path,
                pause: FaultPause, request: pytest.FixtureRequest) -> AsyncIterator[Stack]:
    app = create_app(settings, temporal=temporal, pool=db)
    async with running_workers(temporal, db, settings, interceptors=[pause]):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://isolator.test") as api:
            try:
                yield Stack(api=api, settings=settings, db=db, temporal=temporal, tmp_path=tmp_path)
            finally:
                pause.release.touch()  # a failed test leaves no activity held: the workers can stop
                if request.node.stash.get(CALL_FAILED, False):
                    await terminate_open_workflows(temporal, settings.task_queue)


async def until(holds: asyncio.Future | object, seconds: float = 60) -> None:
    for _ in range(int(seconds * 20)):
        if await holds():  # type: ignore[operator]
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{holds} did not hold")


async def test_a_run_queued_before_its_environment_s_workflow_starts_waits_for_it(
        stack: Stack, repo: Path, pause: FaultPause) -> None:
    await stack.register(repo)
    first = asyncio.create_task(stack.say("race-1", "first"))
    await until(lambda: asyncio.sleep(0, pause.marker.exists()))  # recorded, its workflow not started
    second = asyncio.create_task(stack.say("race-1", "second"))
    await until(lambda: stack.db.fetchval("SELECT count(*) = 1 FROM agent_runs"))  # the second's, queueing
    pause.release.touch()

    resolutions = [(await task)["result"] for task in (first, second)]
    assert [resolution["outcome"] for resolution in resolutions] == ["created", "reused"]
    runs = [await finished_run(stack, resolution["agentRunId"]) for resolution in resolutions]
    assert [run["status"] for run in runs] == ["done", "done"], runs
    # One after the other, in the order they reached the queue (the second may have got there first).
    (start_a, a), (end_a, a_again), (start_b, b), (end_b, b_again) = [
        line.split()[:2] for line in (stack.tmp_path / "runs").read_text().splitlines()]
    assert (start_a, end_a, start_b, end_b) == ("start", "end", "start", "end")
    assert a == a_again and b == b_again and {a, b} == {"first", "second"}
