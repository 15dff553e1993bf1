"""An automation's Temporal Schedule (docs/automations.md): while a firing runs the next ones are skipped
and no two run at once; a firing time passed while the workers were down fires once when they return,
and the times missed meanwhile do not pile up; with AUTOMATIONS=off a firing runs and says nothing.

Real Temporal (its Schedules), PostgreSQL and git, and small real agents (tests/agents/waiter.py, which
works until the test releases it; chatter.py); reports read in the test adapter's place.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import asyncpg
import httpx
from temporalio.client import Client, ScheduleActionExecutionStartWorkflow, ScheduleHandle

from activities.automations.schedules import schedule_id
from api.app import create_app
from isolator.contracts.automation import FiringEnd
from isolator.settings import Settings
from tests.agents import command
from tests.conftest import Stack
from tests.results import eventually
from workers.worker import running_workers


async def _make(stack: Stack, codebase: dict, prefix: str, **fields: str) -> tuple[str, ScheduleHandle]:
    name = f"{prefix}-{uuid.uuid4().hex[:6]}"
    made = await stack.api.post("/api/automations", json={
        "name": name, "codebase": codebase["name"], "prompt": "look at the code", "report": f"test:{name}",
        **fields})
    assert made.status_code == 201, made.text
    return name, stack.temporal.get_schedule_handle(schedule_id(name))


async def _firings(db: asyncpg.Pool, name: str) -> list[asyncpg.Record]:
    return await db.fetch("SELECT * FROM automation_firings WHERE automation = $1 ORDER BY started_at", name)


def _finished(reports: list[str], name: str) -> int:
    return sum(f"Automation `{name}` finished" in text for text in reports)


async def test_while_a_slow_firing_runs_the_next_ones_are_skipped_and_none_run_at_once(
    stack: Stack, repo: Path, tmp_path: Path
) -> None:
    release = tmp_path / "release"
    stack.settings.agent_command_line = command("waiter", str(release))
    name, schedule = await _make(stack, await stack.register(repo), "slow", schedule="@every 5s")
    most_at_once = 0

    async def look() -> tuple[int, int]:
        """Skipped firings and firings started; at each look, how many run at once (rows and Temporal)."""
        nonlocal most_at_once
        described = await schedule.describe()
        running = await stack.db.fetchval(
            "SELECT count(*) FROM automation_firings WHERE automation = $1 AND finished_at IS NULL", name)
        most_at_once = max(most_at_once, running, len(described.info.running_actions))
        assert most_at_once <= 1, "two firings ran at once"
        return described.info.num_actions_skipped_overlap, described.info.num_actions

    try:
        async def two_skipped() -> bool:
            return (await look())[0] >= 2

        await eventually(two_skipped, "two firing times skipped while the first firing runs", seconds=180)
        assert (await look())[1] == 1, "only the first firing started"
        first = await _firings(stack.db, name)
        assert [row["state"] for row in first] == ["running"], first
        assert await stack.db.fetchval("SELECT status FROM agent_runs WHERE id = $1", first[0]["run_id"]) == "running"

        release.touch()  # the first firing's agent ends; the schedule's next time starts the second

        async def second_finished() -> bool:
            await look()
            return _finished(await stack.replies(name), name) >= 2

        await eventually(second_finished, "the first two firings' reports", seconds=180)
        paused = await stack.api.post(f"/api/automations/{name}/pause")
        assert paused.status_code == 200, paused.text
    finally:
        await schedule.delete()
    assert most_at_once == 1
    rows = [row for row in await _firings(stack.db, name) if row["finished_at"] is not None]
    assert len(rows) >= 2 and all(row["state"] == "done" for row in rows), rows
    for earlier, later in zip(rows, rows[1:]):
        assert earlier["finished_at"] <= later["started_at"], "two firings ran at once"


async def test_a_firing_time_passed_while_the_workers_were_down_fires_once_when_they_return(
    settings: Settings, db: asyncpg.Pool, temporal: Client, tmp_path: Path, repo: Path
) -> None:
    settings.agent_command_line = command("chatter", "1")
    app = create_app(settings, temporal=temporal, pool=db)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://isolator.test", timeout=60) as api:
        stack = Stack(api=api, settings=settings, db=db, temporal=temporal, tmp_path=tmp_path)
        async with running_workers(temporal, db, settings):
            codebase = await stack.register(repo)
        # The workers are down: the schedule is made and its firing times pass with nobody to run them.
        name, schedule = await _make(stack, codebase, "catchup", schedule="@every 5s", catchup="1m")
        try:
            async def times_missed() -> bool:
                info = (await schedule.describe()).info
                assert info.num_actions <= 1, "the firing times missed while down piled up"
                return info.num_actions_skipped_overlap >= 2

            await eventually(times_missed, "two more firing times passed while the first waits", seconds=120)
            # Nothing more fires once the workers are back, so that every firing seen is the downtime's.
            await schedule.pause(note="the test counts the firings of the downtime")
            described = await schedule.describe()
            assert described.info.num_actions == 1, "the firing times missed while down did not pile up"
            fired = described.info.recent_actions[-1]
            assert isinstance(fired.action, ScheduleActionExecutionStartWorkflow)
            assert fired.started_at - fired.scheduled_at < timedelta(minutes=1), "within its catch-up window"
            assert await _firings(db, name) == [], "nothing ran while the workers were down"

            back = datetime.now(timezone.utc)
            async with running_workers(temporal, db, settings):
                async def reported() -> bool:
                    return _finished(await stack.replies(name), name) >= 1

                await eventually(reported, "the missed firing's report", seconds=180)
                end = await temporal.get_workflow_handle(fired.action.workflow_id, result_type=FiringEnd).result()
                assert end.state == "done", end
        finally:
            await schedule.delete()
        assert _finished(await stack.replies(name), name) == 1
    rows = await _firings(db, name)
    assert [(row["workflow_id"], row["state"]) for row in rows] == [(fired.action.workflow_id, "done")]
    assert rows[0]["started_at"] >= back, "it ran once the workers were back"


async def test_with_automations_off_a_firing_runs_nothing_and_says_nothing(stack: Stack, repo: Path) -> None:
    stack.settings.agent_command_line = command("chatter", "1")
    stack.settings.automations = "off"
    name, schedule = await _make(stack, await stack.register(repo), "off", schedule="@every 1h")
    try:
        started = await stack.api.post(f"/api/automations/{name}/run")
        assert started.status_code == 202, started.text
        end = await stack.temporal.get_workflow_handle(started.json()["workflowId"],
                                                        result_type=FiringEnd).result()
    finally:
        await schedule.delete()
    assert end.state == "refused" and "AUTOMATIONS=off" in end.summary, end
    assert await _firings(stack.db, name) == []
    assert await stack.db.fetchval("SELECT count(*) FROM agent_runs WHERE platform = 'automation'") == 0
    assert await stack.db.fetchval("SELECT count(*) FROM conversations WHERE platform = 'automation'") == 0
    assert await stack.replies(name) == []
