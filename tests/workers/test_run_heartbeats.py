"""An agent that talks a lot, several at once, on a loaded machine: the runs' own output handling does not
hold the worker's event loop, so their liveness heartbeats keep their second (workers/heartbeats.py) and no
run whose worker lives is taken for interrupted."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from isolator.settings import Settings
from tests.agent_runs import finished_run
from tests.agents import command
from tests.conftest import Stack
from workers.heartbeats import LATENESS
from workflows.steps.runs.queue import RUN_HEARTBEAT_TIMEOUT

RUNS = 4  # AGENT_MAX_CONCURRENT's default: all at once
LINES = int(os.environ.get("ISOLATOR_CHATTER_LINES", "100000"))  # some 9 MB each
# The longest wait between two beats this test may see, far below the run's heartbeat timeout.
LONGEST_GAP_SECONDS = 3.0


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"agent_command_line": command("chatter", str(LINES)),
                                       "agent_max_concurrent": RUNS})


async def test_runs_that_print_fast_keep_their_heartbeats(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    conversations = [f"chatter-{number}" for number in range(RUNS)]
    for conversation in conversations:
        await stack.say(conversation, "/clone")  # the worktree made first: only the runs overlap below
    LATENESS.reset()
    started = await asyncio.gather(*(stack.say(conversation, "talk") for conversation in conversations))
    runs = await asyncio.gather(*(finished_run(stack, answer["result"]["agentRunId"], seconds=600)
                                  for answer in started))

    print(f"heartbeats: {LATENESS.beats}, longest gap {LATENESS.longest:.2f} s, late {LATENESS.late}")
    assert [run["status"] for run in runs] == ["done"] * RUNS, runs
    assert LATENESS.beats >= RUNS, "the runs lasted long enough to beat"
    assert LATENESS.longest < LONGEST_GAP_SECONDS < RUN_HEARTBEAT_TIMEOUT.total_seconds() / 3, LATENESS
