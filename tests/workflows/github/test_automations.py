"""Automations end to end (docs/automations.md): a Temporal Schedule fires, the agent works in a fresh
worktree, a draft PR is opened and the report reaches its place; paused, it fires no more.

Real Temporal (its Schedules), PostgreSQL and git, the fake GitHub driven by PyGithub, and a small real
agent (tests/agents/changer.py); the report place is the test adapter's `test:<conversation>`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from activities.automations.schedules import FIRING_WORKFLOW, schedule_id
from isolator.contracts.automation import FiringEnd, FiringInput
from isolator.settings import Settings
from tests.agents import command
from tests.conftest import Stack
from tests.fakes.github_api import FakeGitHub
from tests.platforms.github import REPO, URL
from tests.results import eventually, tip, with_github_origin


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"agent_command_line": command("changer")})


async def _reports(stack: Stack, place: str) -> list[str]:
    return await stack.replies(place)


async def test_a_schedule_fires_delivers_a_draft_pr_and_a_report_then_paused_fires_no_more(
    stack: Stack, fake: FakeGitHub, repo: Path
) -> None:
    origin = fake.origin = with_github_origin(repo)
    codebase = await stack.register(repo, url=URL)
    made = await stack.api.post("/api/automations", json={
        "name": "deps", "codebase": codebase["name"], "schedule": "@every 5s", "prompt": "update the dependencies",
        "report": "test:reports", "results": "pr"})
    assert made.status_code == 201, made.text
    assert made.json()["nextFiring"] is not None

    async def reported() -> bool:
        return any("Automation `deps` finished" in text for text in await _reports(stack, "reports"))

    await eventually(reported, "the first firing's report", seconds=120)
    paused = await stack.api.post("/api/automations/deps/pause")
    assert paused.json()["paused"] is True and paused.json()["nextFiring"] is None
    described = await stack.temporal.get_schedule_handle(schedule_id("deps")).describe()
    assert described.schedule.state.paused

    report = next(text for text in await _reports(stack, "reports") if "Automation `deps` finished" in text)
    pull = fake.created_pulls[0]
    assert f"PR: https://github.com/{REPO}/pull/{pull['number']}" in report
    assert pull["draft"] is True and pull["title"].startswith("deps: ")
    assert tip(origin, f"refs/heads/{pull['head']['ref']}") is not None, "the firing's branch is pushed"
    firings = (await stack.api.get("/api/automations/deps")).json()["firings"]
    assert any(firing["state"] == "done" and (firing["pullRequest"] or "").endswith(f"/pull/{pull['number']}")
               for firing in firings), firings

    # What the schedule would start, started by hand while paused: it runs nothing and says nothing.
    before = await _reports(stack, "reports")
    end = await stack.temporal.execute_workflow(FIRING_WORKFLOW, FiringInput("deps"), id="automation:deps-by-hand",
                                                task_queue=stack.settings.task_queue, result_type=FiringEnd)
    assert end.state == "refused" and "paused" in end.summary
    assert await _reports(stack, "reports") == before


async def test_a_definition_with_a_mistake_is_refused_with_its_reason_and_makes_nothing(
    stack: Stack, fake: FakeGitHub, repo: Path
) -> None:
    codebase = await stack.register(repo)
    refused = await stack.api.post("/api/automations", json={
        "name": "bad", "codebase": codebase["name"], "schedule": "every day", "prompt": "p", "report": "test:r"})
    assert refused.status_code == 422 and "cron's five fields" in refused.json()["detail"]
    unknown = await stack.api.post("/api/automations", json={
        "name": "bad", "codebase": "nope", "schedule": "@every 1h", "prompt": "p", "report": "test:r"})
    assert unknown.status_code == 422 and codebase["name"] in unknown.json()["detail"]
    assert (await stack.api.get("/api/automations")).json() == {"automations": []}
    assert (await stack.api.get("/api/automations/bad")).status_code == 404
