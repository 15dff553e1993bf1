"""Waiting for agent runs and their messages, through the API as a user would."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Callable

from tests.conftest import Stack
from workflows.environment import EnvironmentWorkflow

ENDED = ("done", "failed", "timed_out", "stopped", "interrupted", "dropped", "waiting")


async def run_of(stack: Stack, run_id: str) -> dict:
    response = await stack.api.get(f"/api/runs/{run_id}")
    assert response.status_code == 200, response.text
    return response.json()


async def finished_run(stack: Stack, run_id: str, seconds: float = 60) -> dict:
    """The run once it has ended."""
    for _ in range(int(seconds * 20)):
        run = await run_of(stack, run_id)
        if run["status"] in ENDED:
            return run
        await asyncio.sleep(0.05)
    raise AssertionError(f"run {run_id} did not end: {run}")


async def replies_when(stack: Stack, conversation: str, ready: Callable[[list[str]], bool],
                       seconds: float = 30) -> list[str]:
    """The conversation's replies (latest texts) once `ready` holds for them."""
    for _ in range(int(seconds * 20)):
        replies = await stack.replies(conversation)
        if ready(replies):
            return replies
        await asyncio.sleep(0.05)
    raise AssertionError(f"replies of {conversation}: {replies}")


async def runs_idle(stack: Stack, environment_id: str, seconds: float = 30) -> None:
    """Once the environment's workflow has no run running or queued (a run's record says `done` a
    moment before its workflow hears of it)."""
    handle = stack.temporal.get_workflow_handle_for(EnvironmentWorkflow.run, f"environment:{environment_id}")
    for _ in range(int(seconds * 20)):
        state = await handle.query(EnvironmentWorkflow.state)
        if state.running is None and not state.runs:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"environment {environment_id} still runs: {state.running}, {state.runs}")


def alive(pid: int) -> bool:
    """Whether a process runs; a zombie does not (it runs nothing, its parent just has not reaped it)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"


def spawned(pids: Path) -> tuple[int, int]:
    """The host's ids of tests/agents/spawner.py and its child, found by the file named in their
    command lines (in the sandbox, the ids they write are those of their own PID namespace)."""
    agent = child = None
    for entry in Path("/proc").iterdir():
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if str(pids).encode() in words and len(words) > 2:
            if words[1].endswith(b"spawner.py"):
                agent = int(entry.name)
            elif words[1] == b"-c":
                child = int(entry.name)
    assert agent is not None and child is not None, f"spawner of {pids} not found"
    return agent, child
