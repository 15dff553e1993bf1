"""`/stop` meeting a run that has just ended by itself: the run stays `done` and the reply says it had
finished, instead of claiming a stop. Real git, PostgreSQL and Temporal; the run's last step (its
record) is held with a row lock so that the stop arrives exactly then."""

from __future__ import annotations

import asyncio
from pathlib import Path

import asyncpg
from temporalio.api.enums.v1 import PendingActivityState
from temporalio.client import Client

from isolator.contracts.environment import environment_workflow_id
from tests.agent_runs import finished_run, replies_when, run_of
from tests.agents import command
from tests.conftest import Stack


async def until(condition, what: str, seconds: float = 60) -> None:  # type: ignore[no-untyped-def]
    for _ in range(int(seconds * 20)):
        if await condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"not within {seconds} s: {what}")


async def record_waits_for_lock(db: asyncpg.Pool) -> bool:
    """The run's wrap-up is at its last step: its record's update waits for the test's row lock."""
    return bool(await db.fetchval(
        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%UPDATE agent_runs%'"
    ))


async def cancel_delivered(temporal: Client, environment_id: str) -> bool:
    """The run's activity was asked to cancel, and has heartbeated since: the answer carried the cancel."""
    handle = temporal.get_workflow_handle(environment_workflow_id(environment_id))
    pending = [activity for activity in (await handle.describe()).raw_description.pending_activities
               if activity.activity_type.name == "run_agent"]
    if not pending or pending[0].state != PendingActivityState.PENDING_ACTIVITY_STATE_CANCEL_REQUESTED:
        return False
    seen = pending[0].last_heartbeat_time.ToDatetime()

    async def beat_after() -> bool:
        again = [activity for activity in (await handle.describe()).raw_description.pending_activities
                 if activity.activity_type.name == "run_agent"]
        return not again or again[0].last_heartbeat_time.ToDatetime() > seen

    await until(beat_after, "a heartbeat after the cancel request")
    return True


async def test_a_stop_that_meets_a_run_ending_by_itself_says_it_had_finished(
    stack: Stack, repo: Path, tmp_path: Path
) -> None:
    release = tmp_path / "release"
    stack.settings.agent_command_line = command("waiter", str(release))
    await stack.register(repo)
    created = (await stack.say("late-stop", "a long refactor please"))["result"]
    run_id = created["agentRunId"]
    await until(lambda: _status_is(stack, run_id, "running"), "the run started")

    async with stack.db.acquire() as connection:
        locked = connection.transaction()
        await locked.start()
        await connection.execute("SELECT 1 FROM agent_runs WHERE id = $1 FOR UPDATE", run_id)
        release.touch()  # the agent ends by itself, exit code 0; its record now waits for the lock
        await until(lambda: record_waits_for_lock(stack.db), "the run's record waits")
        stopping = asyncio.create_task(stack.say("late-stop", "/stop"))
        await until(lambda: cancel_delivered(stack.temporal, created["environmentId"]), "the stop reached the run")
        await locked.rollback()

    replies = (await stopping)["result"]["replies"]
    assert replies == ['The agent\'s run on "a long refactor please" had already finished (done) when the stop '
                       'reached it: nothing was stopped.']
    run = await finished_run(stack, run_id)
    assert (run["status"], run["exit_code"]) == ("done", 0), run
    answer = await replies_when(stack, "late-stop", lambda texts: any("— Done in" in text for text in texts))
    assert any("finished a long refactor please" in text for text in answer)


async def _status_is(stack: Stack, run_id: str, status: str) -> bool:
    return (await run_of(stack, run_id))["status"] == status
