"""Two messages into a new conversation at once: the first records its environment a moment before it
starts the environment's workflow, and the second may find that environment in between. Its run waits
for the workflow and is done as the first one is, never dropped as if the worktree were gone. The first
message is held between its two steps here, as a loaded machine may hold it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from temporalio.worker import Interceptor

from isolator.settings import Settings
from tests.agent_runs import finished_run
from tests.agents import command
from tests.conftest import Stack
from tests.faults.paused_worker import FaultPause
from tests.results import eventually


@pytest.fixture
def settings(settings: Settings, tmp_path: Path) -> Settings:
    return settings.model_copy(update={"agent_command_line": command("recorder", str(tmp_path / "runs"), "0")})


@pytest.fixture
def pause(tmp_path: Path) -> FaultPause:
    """Every message's start of its environment's workflow waits at `pause.marker` until `pause.release`."""
    return FaultPause("attach_environment", "before", tmp_path / "paused", tmp_path / "release")


@pytest.fixture
def worker_interceptors(pause: FaultPause) -> list[Interceptor]:
    return [pause]


async def test_a_run_queued_before_its_environment_s_workflow_starts_waits_for_it(
        stack: Stack, repo: Path, pause: FaultPause) -> None:
    async def first_held() -> bool:  # recorded, its environment's workflow not started
        return pause.marker.exists()

    async def second_queueing() -> bool:  # its run recorded, its update waiting for the workflow
        return await stack.db.fetchval("SELECT count(*) = 1 FROM agent_runs")

    await stack.register(repo)
    try:
        first = asyncio.create_task(stack.say("race-1", "first"))
        await eventually(first_held, "the first message held before its workflow starts")
        second = asyncio.create_task(stack.say("race-1", "second"))
        await eventually(second_queueing, "the second message's run queueing")
    finally:
        pause.release.touch()  # also when the test fails here: a held step would keep the workers from stopping

    resolutions = [(await task)["result"] for task in (first, second)]
    assert [resolution["outcome"] for resolution in resolutions] == ["created", "reused"]
    runs = [await finished_run(stack, resolution["agentRunId"]) for resolution in resolutions]
    assert [run["status"] for run in runs] == ["done", "done"], runs
    # One after the other, in the order they reached the queue (the second may have got there first).
    (start_a, a), (end_a, a_again), (start_b, b), (end_b, b_again) = [
        line.split()[:2] for line in (stack.tmp_path / "runs").read_text().splitlines()]
    assert (start_a, end_a, start_b, end_b) == ("start", "end", "start", "end")
    assert a == a_again and b == b_again and {a, b} == {"first", "second"}
