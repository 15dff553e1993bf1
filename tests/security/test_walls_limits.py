"""Limits per run (issue "Walls", row 8): a run that starts 3,000 processes, or takes 3 GiB of memory,
is stopped at its limit and says so in one line, in its reply and in its log, while the service
answers `/readyz` and another conversation's run is answered meanwhile. Real bubblewrap, cgroups,
PostgreSQL and Temporal, as root (as CI runs)."""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from pathlib import Path
from typing import AsyncIterator

import pytest

from activities.sandbox import limits
from isolator.settings import Settings
from tests.agent_runs import finished_run, replies_when
from tests.agents import command
from tests.conftest import Stack

PROCESSES = 128
MEMORY_MB = 1024


@pytest.fixture
def settings(settings: Settings, tmp_path: Path) -> Settings:
    return settings.model_copy(update={"agent_command_line": command("hog", str(tmp_path / "progress")),
                                       "sandbox_max_processes": PROCESSES, "sandbox_memory_mb": MEMORY_MB})


@pytest.fixture(autouse=True)
def cgroups_here(stack: Stack) -> None:
    assert limits.current().found is not None, \
        f"the test needs cgroups (run it as root): this worker may make none here: {limits.current().why}"


@asynccontextmanager
async def readiness(stack: Stack) -> AsyncIterator[list[int]]:
    """`/readyz`'s answers, asked every 0.1 s while the block runs."""
    answers: list[int] = []

    async def ask() -> None:
        while True:
            answers.append((await stack.api.get("/readyz")).status_code)
            await asyncio.sleep(0.1)

    asking = asyncio.create_task(ask())
    try:
        yield answers
    finally:
        asking.cancel()
        await asyncio.gather(asking, return_exceptions=True)


async def greedy_run_beside_another(stack: Stack, repo: Path, greed: str) -> tuple[dict, list[int]]:
    """The greedy run and a quick one of another conversation, asked at once; the greedy run's record
    once both have ended, and `/readyz`'s answers meanwhile."""
    await stack.register(repo)
    async with readiness(stack) as answers:
        greedy, other = await asyncio.gather(stack.say("greedy-1", greed), stack.say("other-1", "a quick question"))
        run = await finished_run(stack, greedy["result"]["agentRunId"])
        assert (await finished_run(stack, other["result"]["agentRunId"]))["status"] == "done"
    assert await replies_when(stack, "other-1", lambda texts: any("quick answer" in text for text in texts))
    return run, answers


def progress(tmp_path: Path, word: str) -> list[int]:
    return [int(line.split()[1]) for line in (tmp_path / "progress").read_text().splitlines() if line.startswith(word)]


async def test_a_fork_bomb_is_stopped_at_its_limit_of_processes_while_the_service_answers(
    stack: Stack, repo: Path, tmp_path: Path
) -> None:
    run, ready = await greedy_run_beside_another(stack, repo, "fork 3000")

    said = f"it reached its limit of {PROCESSES} processes (SANDBOX_MAX_PROCESSES)"
    assert run["status"] == "failed", run
    assert max(progress(tmp_path, "started")) < PROCESSES, "never more processes than its limit (its own counted)"
    assert progress(tmp_path, "refused"), "its forks past the limit were refused"
    log = (await stack.api.get(f"/api/runs/{run['id']}/log")).text
    assert log.endswith(f"isolator: stopped: {said}\n"), log[-300:]
    await replies_when(stack, "greedy-1", lambda texts: any("— Stopped after" in text and said in text
                                                             for text in texts))
    assert ready and set(ready) == {200}, ready


async def test_a_run_that_takes_3_gib_is_stopped_at_its_memory_while_the_service_answers(
    stack: Stack, repo: Path, tmp_path: Path
) -> None:
    run, ready = await greedy_run_beside_another(stack, repo, "allocate 3072")

    said = f"it used all of its {MEMORY_MB:,} MiB of memory (SANDBOX_MEMORY_MB)"
    assert run["status"] == "failed", run
    assert max(progress(tmp_path, "allocated")) < MEMORY_MB, "it never held more than its limit"
    log = (await stack.api.get(f"/api/runs/{run['id']}/log")).text
    assert log.endswith(f"isolator: stopped: {said}\n"), log[-300:]
    await replies_when(stack, "greedy-1", lambda texts: any("— Stopped after" in text and said in text
                                                             for text in texts))
    assert ready and set(ready) == {200}, ready
