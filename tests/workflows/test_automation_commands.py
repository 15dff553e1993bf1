"""Chat's `/automation list|show|run|pause|resume` and `/status` in a report place, through the test
adapter against the whole stack (real PostgreSQL, Temporal and its Schedules, git, a small real agent).
The test adapter has no allow rule, so its sender may run them, as it may every command; who may on a
platform with ADMIN_USERS is tests/trust/github/test_github_automation_admins.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from activities.automations.commands import AutomationCommandActivities
from activities.automations.records import AutomationRecords
from activities.automations.schedules import schedule_id
from isolator.contracts.automation_commands import AutomationCommand
from isolator.settings import Settings
from tests.agents import command
from tests.automations_made import make_automations
from tests.conftest import Stack
from tests.results import eventually


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"agent_command_line": command("ticker", "2", "0.05")})


async def _said(stack: Stack, text: str, conversation: str = "ops") -> str:
    answer = await stack.say(conversation, text)
    assert answer["result"]["outcome"] == "command", answer
    return "\n".join(answer["result"]["replies"])


async def test_list_show_pause_resume_and_run_from_chat(stack: Stack, repo: Path) -> None:
    await make_automations(stack, repo)
    schedule = stack.temporal.get_schedule_handle(schedule_id("nightly"))
    assert "`/automation list|show|run|pause|resume <name>`" in await _said(stack, "/help")

    listed = await _said(stack, "/automation list")
    assert listed.startswith("Automations (2):")
    assert re.search(r"`nightly` \(project\): `@every 3600s` \(UTC\), next at \d{4}-\d\d-\d\d \d\d:\d\d UTC; "
                     r"reports to `test:night-reports`; active", listed), listed
    assert "`triage` (project): on `github:issues.labeled:agent`; reports to `test:triage-reports`; active" in listed
    shown = await _said(stack, "/automation show nightly")
    assert "Automation `nightly` of `project`, defined through the API" in shown
    assert "Prompt: look at <b>the flakes</b>" in shown and shown.endswith("No firing yet.")

    assert (await _said(stack, "/automation pause nightly")).startswith("Paused `nightly`: its schedule fires no more")
    assert (await schedule.describe()).schedule.state.paused
    view = (await stack.api.get("/api/automations/nightly")).json()
    assert view["paused"] and view["pausedReason"] == "paused from chat by tester"
    assert await _said(stack, "/automation pause nightly") == \
        "`nightly` is paused already (paused from chat by tester)."
    assert await _said(stack, "/automation run nightly") == \
        "`nightly` is paused (paused from chat by tester): `/automation resume nightly` first."
    assert (await _said(stack, "/automation resume NIGHTLY")).startswith("Resumed `nightly`: its next firing is at")
    assert not (await schedule.describe()).schedule.state.paused
    assert await _said(stack, "/automation resume nightly") == "`nightly` is not paused."

    assert await _said(stack, "/automation run triage") == \
        "Started a firing of `triage` now: it reports to `test:triage-reports`."

    async def fired() -> bool:
        return await stack.db.fetchval("SELECT run_id FROM automation_firings WHERE automation = 'triage'") is not None

    await eventually(fired, "the firing's run", seconds=120)
    assert re.search(r"^- \d{4}-\d\d-\d\d \d\d:\d\d UTC, by run now: \w+, run `[0-9a-f-]{36}`",
                     await _said(stack, "/automation show triage"), re.M)


async def test_a_mistake_is_answered_with_what_there_is(stack: Stack, repo: Path) -> None:
    await make_automations(stack, repo)
    assert await _said(stack, "/automation show nope") == "There is no automation `nope`: there are `nightly`, `triage`."
    assert await _said(stack, f"/automation run `{'x' * 200}") == f"There is no automation `{'x' * 64}`: there are " \
                                                                   "`nightly`, `triage`."
    for wrong in ("/automation", "/automation frobnicate nightly", "/automation run", "/automation list all"):
        assert (await _said(stack, wrong)).startswith("`/automation list`: the automations;"), wrong
    assert await stack.db.fetchval("SELECT count(*) FROM automation_firings") == 0
    assert not (await stack.api.get("/api/automations/nightly")).json()["paused"]


async def test_status_in_a_report_place_names_the_automations_reporting_there(stack: Stack, repo: Path) -> None:
    await make_automations(stack, repo)
    assert "Automations reporting here: `nightly` (`/automation show <name>`)" in \
        await _said(stack, "/status", "night-reports")
    assert "Automations reporting here: `triage`" in await _said(stack, "/status", "triage-reports")
    assert "Automations reporting here" not in await _said(stack, "/status", "elsewhere")

    # `github:origin` reports where its event came from, which only its firings record.
    made = await stack.api.post("/api/automations", json={
        "name": "origin", "codebase": "project", "on": ["github:issues.opened"], "prompt": "p", "report": "github:origin"})
    assert made.status_code == 201, made.text
    await AutomationRecords(stack.db).start_firing("automation:origin:event-1", "origin", "github:issues.opened",
                                                   "origin:event-1", "test", "from-an-event")
    assert "Automations reporting here: `origin`" in await _said(stack, "/status", "from-an-event")


async def test_a_retried_run_step_starts_one_firing(stack: Stack, repo: Path) -> None:
    await make_automations(stack, repo)
    step = AutomationCommandActivities(stack.settings, stack.db, stack.temporal)
    asked = AutomationCommand("test", "ops", ["run", "triage"], message_workflow_id="message:test:retried")
    first = await step.automation_command(asked)
    firing = stack.temporal.get_workflow_handle(await _firing_id(stack))
    await firing.result()
    ended = (await firing.describe()).run_id
    assert await step.automation_command(asked) == first, "the same answer"
    assert (await firing.describe()).run_id == ended, "no second firing, even after the first ended"


async def _firing_id(stack: Stack) -> str:
    async def recorded() -> bool:
        return await stack.db.fetchval("SELECT count(*) FROM automation_firings") == 1

    await eventually(recorded, "the firing's record")
    return await stack.db.fetchval("SELECT workflow_id FROM automation_firings")
