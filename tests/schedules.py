"""The cleanup schedule in the tests: its handle, triggering a sweep, and a little git to make work merged."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import AsyncIterator

import pytest
from temporalio.client import (
    Client,
    ScheduleActionExecutionStartWorkflow,
    ScheduleHandle,
    WorkflowHandle,
)
from temporalio.service import RPCError, RPCStatusCode

from isolator.contracts.cleanup import CleanupRunReport
from tests.conftest import Stack
from tests.gitrepos import git
from workers.schedule import SCHEDULE_ID
from workflows.cleanup import CleanupWorkflow


@pytest.fixture
async def schedule(temporal: Client) -> AsyncIterator[ScheduleHandle]:
    """The schedule's handle; the schedule is deleted before and after, as the server is the session's."""
    handle = temporal.get_schedule_handle(SCHEDULE_ID)
    await _delete(handle)
    yield handle
    await _delete(handle)


async def _delete(handle: ScheduleHandle) -> None:
    try:
        await handle.delete()
    except RPCError as error:
        if error.status != RPCStatusCode.NOT_FOUND:
            raise


async def schedules_named(client: Client, schedule_id: str) -> int:
    return len([listed async for listed in await client.list_schedules() if listed.id == schedule_id])


async def trigger_sweep(client: Client, schedule: ScheduleHandle) -> WorkflowHandle[CleanupWorkflow, CleanupRunReport]:
    """Trigger the schedule once; the handle of the CleanupWorkflow run it started."""
    before = (await schedule.describe()).info.num_actions
    await schedule.trigger()
    for _ in range(200):
        info = (await schedule.describe()).info
        if info.num_actions > before:
            break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError("the triggered schedule started no workflow")
    started = info.recent_actions[-1].action
    assert isinstance(started, ScheduleActionExecutionStartWorkflow)
    assert started.workflow_id.startswith(SCHEDULE_ID)
    return client.get_workflow_handle_for(CleanupWorkflow.run, started.workflow_id,
                                          run_id=started.first_execution_run_id)


async def run_triggered_sweep(stack: Stack, schedule: ScheduleHandle) -> CleanupRunReport:
    handle = await trigger_sweep(stack.temporal, schedule)
    return await asyncio.wait_for(handle.result(), timeout=60)


async def row(stack: Stack, environment_id: str) -> str:
    return await stack.db.fetchval("SELECT status FROM isolation_environments WHERE id = $1", environment_id)


async def go_quiet(stack: Stack, platform: str, conversation_id: str, days: int) -> None:
    """The conversation's last message was `days` ago."""
    changed = await stack.db.execute(
        """UPDATE conversations SET last_activity_at = now() - make_interval(days => $3)
           WHERE platform = $1 AND platform_conversation_id = $2""",
        platform, conversation_id, days,
    )
    assert changed == "UPDATE 1"


def commit_in(checkout: Path, name: str, text: str) -> str:
    (checkout / name).write_text(text)
    git("add", "--", name, cwd=checkout)
    git("commit", "-q", "-m", f"add {name}", cwd=checkout)
    return git("rev-parse", "HEAD", cwd=checkout).strip()


def subcommand(args: tuple[str, ...]) -> str:
    return next(arg for arg in args if not arg.startswith("-"))
