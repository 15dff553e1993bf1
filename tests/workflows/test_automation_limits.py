"""An automation's limits with the real Claude Code against the fake model API: a firing past its
`max_cost_usd` stops (nobody is there to ask), three failures in a row pause it, its daily budget
refuses firings once spent, and `memory = "keep"` resumes one agent session firing after firing.

Real Temporal, PostgreSQL and git; firings started as "run now" does (POST /api/automations/<name>/run);
reports read in the test adapter's place.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from activities.automations.schedules import schedule_id
from tests.agent_clis import claude_binary, use_fake_anthropic
from tests.conftest import Stack
from tests.fakes import anthropic_api
from tests.results import eventually

EXAMPLE = str(Path(__file__).resolve().parents[2] / "examples" / "agent.py")


@pytest.fixture
async def claude(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> anthropic_api.FakeAnthropicApi:
    async with anthropic_api.FakeAnthropicApi() as api:
        use_fake_anthropic(monkeypatch, api)
        stack.settings.agent_driver, stack.settings.agent_executable = "claude", str(claude_binary())
        yield api


async def _make(stack: Stack, codebase: dict, **fields: object) -> str:
    name = f"auto-{uuid.uuid4().hex[:6]}"
    made = await stack.api.post("/api/automations", json={
        "name": name, "codebase": codebase["name"], "schedule": "@every 1h", "prompt": "look at the code",
        "report": f"test:{name}", **fields})
    assert made.status_code == 201, made.text
    return name


async def _fire(stack: Stack, name: str, reports: int) -> list[str]:
    """Run now, then the report place's messages once it holds `reports` of them."""
    started = await stack.api.post(f"/api/automations/{name}/run")
    assert started.status_code == 202, started.text
    found: list[str] = []

    async def reported() -> bool:
        found[:] = await stack.replies(name)
        return len(found) >= reports

    await eventually(reported, f"report {reports} of {name}", seconds=120)
    return found


async def test_past_its_max_cost_a_firing_stops_and_three_failures_in_a_row_pause_it(
    stack: Stack, repo: Path, claude: anthropic_api.FakeAnthropicApi
) -> None:
    codebase = await stack.register(repo)
    name = await _make(stack, codebase, max_cost_usd=0.0001)
    for count in (1, 2, 3):
        reports = await _fire(stack, name, count)
        assert f"Automation `{name}` did not finish" in reports[-1] and "max_cost_usd" in reports[-1], reports[-1]
    assert "failed 3 times in a row and is paused" in reports[-1]
    shown = (await stack.api.get(f"/api/automations/{name}")).json()
    assert shown["paused"] is True and [firing["state"] for firing in shown["firings"]] == ["failed"] * 3
    assert (await stack.temporal.get_schedule_handle(schedule_id(name)).describe()).schedule.state.paused
    refused = await stack.api.post(f"/api/automations/{name}/run")
    assert refused.status_code == 409 and "resume it first" in refused.json()["detail"]


async def test_the_daily_budget_refuses_a_firing_once_spent(
    stack: Stack, repo: Path, claude: anthropic_api.FakeAnthropicApi
) -> None:
    codebase = await stack.register(repo)
    name = await _make(stack, codebase, daily_budget_usd=0.0001)
    assert f"Automation `{name}` finished" in (await _fire(stack, name, 1))[-1]
    calls = len(claude.calls)
    refused = (await _fire(stack, name, 2))[-1]
    assert refused.startswith(f"Automation `{name}` did not run: its daily budget is spent"), refused
    assert len(claude.calls) == calls, "no agent ran"


async def test_memory_keep_resumes_the_first_firing_s_session(stack: Stack, repo: Path) -> None:
    codebase = await stack.register(repo, agent={"agent": "claude", "executable": EXAMPLE})
    name = await _make(stack, codebase, memory="keep")
    await _fire(stack, name, 1)
    await _fire(stack, name, 2)
    rows = await stack.db.fetch("SELECT conversation_id, session_id, output FROM agent_runs WHERE platform = "
                                "'automation' ORDER BY queued_at")
    assert [row["conversation_id"] for row in rows] == [name, name], "one standing conversation"
    assert rows[0]["session_id"] == rows[1]["session_id"]
    assert "first message of our session" in rows[0]["output"]
    assert "first message of our session" not in rows[1]["output"]
