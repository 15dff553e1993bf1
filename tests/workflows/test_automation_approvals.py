"""Approvals of an automation's firing (docs/automations.md), asked in its report place and answered there:
the firing's run (the real Claude Code against the fake Anthropic API) asks, the request comes with its
buttons to the report place (the test adapter's `test:<conversation>`), a stranger's press is refused and
decides nothing, an owner's press resumes the run, and the report arrives. Real git, PostgreSQL, Temporal
and bubblewrap."""

from __future__ import annotations

from pathlib import Path

from api.automation_approvals import AskedIn
from tests.approvals import approval, claude, press, request_of  # noqa: F401 - claude: the fixture
from tests.conftest import Stack
from tests.fakes.anthropic_api import FakeAnthropicApi
from tests.fakes.model_api import run, text
from tests.results import eventually


async def test_an_automation_s_request_is_answered_in_its_report_place_by_an_owner(
        stack: Stack, repo: Path, claude: FakeAnthropicApi) -> None:
    codebase = await stack.register(repo)
    made = await stack.api.post("/api/automations", json={
        "name": "toucher", "codebase": codebase["name"], "schedule": "0 7 * * 1", "report": "test:auto-reports",
        "prompt": "touch pushed.txt please", "owners": ["test:alice"]})
    assert made.status_code == 201, made.text
    claude.then(run("touch pushed.txt"), run("touch pushed.txt"), text("Touched it."))
    started = await stack.api.post("/api/automations/toucher/run")
    assert started.status_code == 202, started.text
    firing = stack.temporal.get_workflow_handle(started.json()["workflowId"])

    asked = await request_of(stack, "auto-reports")
    assert "touch pushed.txt" in asked["text"]
    assert [button["label"] for button in asked["buttons"]] == ["Allow once", "Allow for this conversation", "Deny"]
    status, body = await press(stack, asked["code"], "once", user="mallory")
    assert status == 403 and "owners" in body["detail"], body
    assert (await approval(stack, asked["code"]))["state"] == "pending", "a stranger's press decides nothing"

    status, body = await press(stack, asked["code"], "once", user="alice")
    assert status == 200, body
    end = await firing.result()
    assert end["state"] == "done", end
    answered = await approval(stack, asked["code"])
    assert answered["state"] == "allowed" and answered["answered_by"] == "alice"

    async def reported() -> bool:
        return any("Automation `toucher` finished" in reply and "Touched it." in reply
                   for reply in await stack.replies("auto-reports"))

    await eventually(reported, "the firing's report", seconds=60)
    replies = await stack.replies("auto-reports")
    assert any(asked["code"] in reply and "Allowed once by alice" in reply for reply in replies), \
        "the request in the report place shows its answer"


def test_a_press_counts_in_the_report_place_only() -> None:
    by_id = AskedIn("slack", "C0ALERTS01:", frozenset({"slack:U0OWNER01"}))
    assert by_id.here("slack", "C0ALERTS01:1700000000.000100"), "pressed in the request's own thread"
    assert not by_id.here("slack", "C0RANDOM01:1700000000.000100") and not by_id.here("test", None)
    assert AskedIn("slack", "#alerts:", frozenset()).here("slack", "C0ALERTS01:1700000000.000100")
    assert by_id.owner("U0OWNER01") and not by_id.owner("U0OTHER01")
    chat = AskedIn("slack", "C0ALERTS01:1700000000.000100")
    assert chat.here("slack", "C0ALERTS01:1700000000.000100") and not chat.here("slack", "C0ALERTS01:1.2")
    assert AskedIn("telegram", "-100123:0", frozenset()).here("telegram", "-100123:0")
