"""Issues in the tests: opening and closing them through signed deliveries, and reading their environments."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Callable

from temporalio.client import WorkflowHandle

from isolator.contracts.environment import (
    EnvironmentState,
)
from tests.archives import archive_git
from tests.conftest import Stack
from tests.fakes.github_api import FakeGitHub
from tests.platforms.github import (
    REPO,
    deliver,
    issues_event,
    resolution,
)
from workflows.environment import EnvironmentWorkflow

MENTION = "@isolator please fix"


async def open_issue(stack: Stack, fake: FakeGitHub, number: int) -> str:
    """An issue mentioning the bot; returns its environment id."""
    fake.add_issue(REPO, number)
    response, delivery = await deliver(stack, "issues", issues_event("opened", number, MENTION))
    assert response.status_code == 202, response.text
    result = await resolution(stack, delivery)
    assert result.outcome in ("created", "shared"), result
    assert result.environment_id
    return result.environment_id


async def close(stack: Stack, event: str, payload: dict) -> None:
    response, delivery = await deliver(stack, event, payload)
    assert response.status_code == 202, response.text
    assert (await resolution(stack, delivery)).outcome == "closed"


def environment(stack: Stack, environment_id: str) -> WorkflowHandle:
    return stack.temporal.get_workflow_handle_for(EnvironmentWorkflow.run, f"environment:{environment_id}")


async def settled_state(stack: Stack, environment_id: str) -> EnvironmentState:
    """The state once no removal is waiting or running."""
    handle = environment(stack, environment_id)
    for _ in range(100):
        state = await handle.query(EnvironmentWorkflow.state)
        if state.pending is None and state.status != "removing":
            return state
        await asyncio.sleep(0.1)
    raise AssertionError(f"environment {environment_id} did not settle: {state}")


async def status_of(stack: Stack, environment_id: str) -> str:
    return await stack.db.fetchval("SELECT status FROM isolation_environments WHERE id = $1", environment_id)


async def until(condition: Callable[[], bool], seconds: float = 30) -> None:
    for _ in range(int(seconds * 10)):
        if condition():
            return
        await asyncio.sleep(0.1)
    raise AssertionError("the condition did not come true in time")


def file_in_archive(repo: Path, ref: str) -> str:
    """notes.txt as an archive saved it."""
    return archive_git(repo, "show", f"{ref}:notes.txt")
