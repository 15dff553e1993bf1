"""The Automations page against the whole stack (real PostgreSQL, Temporal and its Schedules, git and a small
real agent): each automation with its triggers, report place, state and next firing; Pause, Resume and Run
now do what the API's do, a refusal is said on the outcome page, and a firing shows with its run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from activities.automations.schedules import schedule_id
from isolator.settings import Settings
from tests.agents import command
from tests.automations_made import make_automations
from tests.conftest import Stack
from tests.results import eventually

ORIGIN = {"Origin": "http://isolator.test"}


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"agent_command_line": command("ticker", "2", "0.05")})


async def _post(stack: Stack, path: str, status: int = 200, csrf: bool = True) -> str:
    page = await stack.api.get("/automations")
    token = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert token is not None, page.text
    answer = await stack.api.post(path, data={"csrf": token.group(1)} if csrf else {}, headers=ORIGIN)
    assert answer.status_code == status, answer.text
    found = re.search(r'<p class="[a-z]+" id="outcome">(.*?)</p>', answer.text, re.S)
    return found.group(1) if found else answer.text


def _row(page: str, name: str) -> str:
    found = re.search(rf'<tr class="automation [a-z]+" data-name="{name}">(.*?)</tr>', page, re.S)
    assert found is not None, page
    return found.group(0)


async def test_the_page_lists_them_and_its_buttons_pause_resume_and_run(stack: Stack, repo: Path) -> None:
    await make_automations(stack, repo)
    page = (await stack.api.get("/automations")).text
    assert '<a href="/automations">Automations</a>' in (await stack.api.get("/")).text
    nightly, triage = _row(page, "nightly"), _row(page, "triage")
    assert "<code>@every 3600s</code>" in nightly and "<code>test:night-reports</code>" in nightly
    assert re.search(r'class="next">\d{4}-\d\d-\d\d \d\d:\d\d UTC', nightly), nightly
    assert "state-active" in nightly and ">Pause<" in nightly and ">Run now<" in nightly
    assert "<code>github:issues.labeled:agent</code>" in triage and "on its events" in triage
    assert "<b>" not in page

    assert "Paused <code>nightly</code>" in await _post(stack, "/automations/nightly/pause")
    paused = _row((await stack.api.get("/automations")).text, "nightly")
    assert "paused</span>" in paused and "paused by the operator" in paused and ">Resume<" in paused
    assert "none while paused" in paused and ">Run now<" not in paused
    assert (await stack.temporal.get_schedule_handle(schedule_id("nightly")).describe()).schedule.state.paused
    refused = await _post(stack, "/automations/nightly/run", status=409)
    assert refused.startswith("Not done: <code>nightly</code> is paused") and "resume it first" in refused

    assert "Resumed <code>nightly</code>" in await _post(stack, "/automations/nightly/resume")
    assert "state-active" in _row((await stack.api.get("/automations")).text, "nightly")
    assert not (await stack.temporal.get_schedule_handle(schedule_id("nightly")).describe()).schedule.state.paused

    assert "Started a firing of <code>triage</code>" in await _post(stack, "/automations/triage/run")

    async def ran() -> bool:
        return 'href="/runs/' in _row((await stack.api.get("/automations")).text, "triage")

    await eventually(ran, "the firing, with its run, on the page", seconds=120)
    assert "by run now" in _row((await stack.api.get("/automations")).text, "triage")


async def test_an_unknown_name_and_a_form_without_its_token_are_refused(stack: Stack, repo: Path) -> None:
    await make_automations(stack, repo)
    assert "no automation <code>nope</code>" in await _post(stack, "/automations/nope/pause", status=404)
    refused = await _post(stack, "/automations/nightly/pause", status=403, csrf=False)
    assert "CSRF" in refused
    assert "state-active" in _row((await stack.api.get("/automations")).text, "nightly")
