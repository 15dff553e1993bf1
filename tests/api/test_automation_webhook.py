"""The generic webhook of automations (`POST /webhooks/automations/<name>`, docs/automations.md): signed
with the automation's own key, it fires the automation once per delivery and the report reaches its place;
unsigned or wrongly signed, it fires nothing.

Real Temporal, PostgreSQL and git, a small real agent (tests/agents/changer.py: its answer repeats the
prompt); the report place is the test adapter's `test:<conversation>`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from pydantic import SecretStr

from api.platforms.automation_webhook import event_fields
from isolator.settings import Settings
from tests.agents import command
from tests.conftest import Stack
from tests.results import eventually

ALERT = {"title": "disk full on db-1", "body": "93% used", "severity": 3, "nested": {"x": "y"}}


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"agent_command_line": command("changer"),
                                       "isolator_secret_key": SecretStr(Fernet.generate_key().decode())})


async def _automation(stack: Stack, repo: Path, name: str = "alerts", on: str = "webhook:call") -> None:
    codebase = await stack.register(repo)
    made = await stack.api.post("/api/automations", json={
        "name": name, "codebase": codebase["name"], "on": [on], "report": f"test:{name}-reports",
        "prompt": "An alert came in: {{ event.title }} ({{ event.body }}). Look at it."})
    assert made.status_code == 201, made.text


def _signed(key: str, body: bytes) -> dict[str, str]:
    return {"X-Isolator-Signature": "sha256=" + hmac.new(key.encode(), body, hashlib.sha256).hexdigest(),
            "Content-Type": "application/json"}


async def _key(stack: Stack, name: str) -> str:
    shown = await stack.api.get(f"/api/automations/{name}/webhook")
    assert shown.status_code == 200, shown.text
    view = shown.json()
    assert view["url"].endswith(f"/webhooks/automations/{name}") and view["key"] in view["curl"]
    assert "X-Isolator-Signature: sha256=$signature" in view["curl"]
    return view["key"]


async def _firings(stack: Stack) -> list[str]:
    return [row["workflow_id"] for row in await stack.db.fetch("SELECT workflow_id FROM automation_firings")]


async def test_a_signed_call_fires_once_per_delivery_and_reports_in_its_place(stack: Stack, repo: Path) -> None:
    await _automation(stack, repo)
    key = await _key(stack, "alerts")
    body = json.dumps(ALERT).encode()

    first = await stack.api.post("/webhooks/automations/alerts", content=body,
                                 headers={**_signed(key, body), "X-Isolator-Delivery": "alert-1"})
    assert first.status_code == 202 and first.json()["status"] == "fired", first.text
    again = await stack.api.post("/webhooks/automations/alerts", content=body,
                                 headers={**_signed(key, body), "X-Isolator-Delivery": "alert-1"})
    assert again.status_code == 202 and again.json()["workflowId"] == first.json()["workflowId"] \
        == "automation:alerts:webhook-alert-1"
    # Without a delivery id, the body's digest is the firing's id: the same body sent twice fires once.
    by_digest = [await stack.api.post("/webhooks/automations/alerts", content=body, headers=_signed(key, body))
                 for _ in range(2)]
    assert by_digest[0].json()["workflowId"] == by_digest[1].json()["workflowId"] != first.json()["workflowId"]
    for workflow_id in (first.json()["workflowId"], by_digest[0].json()["workflowId"]):
        end = await stack.temporal.get_workflow_handle(workflow_id).result()
        assert end["state"] == "done", end

    async def reported() -> bool:
        return sum("Automation `alerts` finished" in text for text in await stack.replies("alerts-reports")) == 2

    await eventually(reported, "two reports in the report place", seconds=120)
    report = next(text for text in await stack.replies("alerts-reports") if "finished" in text)
    assert "<untrusted-input>disk full on db-1</untrusted-input>" in report, report
    assert sorted(await _firings(stack)) == sorted([first.json()["workflowId"], by_digest[0].json()["workflowId"]])
    bad = await stack.api.post("/webhooks/automations/alerts", content=body,
                               headers={**_signed(key, body), "X-Isolator-Delivery": "a b/c"})
    assert bad.status_code == 400 and "X-Isolator-Delivery" in bad.json()["detail"]


async def test_a_wrong_or_missing_signature_is_refused_and_fires_nothing(stack: Stack, repo: Path) -> None:
    await _automation(stack, repo)
    body = json.dumps(ALERT).encode()
    key = await _key(stack, "alerts")
    other_key = hmac.new(stack.settings.isolator_secret_key.get_secret_value().encode(),
                         b"automation-webhook:other", hashlib.sha256).hexdigest()
    for headers in ({}, {"X-Isolator-Signature": "sha256=" + "0" * 64}, _signed(other_key, body),
                    _signed(key, body + b" "), {"X-Isolator-Signature": _signed(key, body)["X-Isolator-Signature"][7:]}):
        refused = await stack.api.post("/webhooks/automations/alerts", content=body, headers=headers)
        assert refused.status_code == 401 and "X-Isolator-Signature" in refused.json()["detail"], refused.text
    # A name that takes no webhook calls, signed with its own key, is unknown here.
    unknown_key = hmac.new(stack.settings.isolator_secret_key.get_secret_value().encode(),
                           b"automation-webhook:nobody", hashlib.sha256).hexdigest()
    unknown = await stack.api.post("/webhooks/automations/nobody", content=body, headers=_signed(unknown_key, body))
    assert unknown.status_code == 404
    assert await _firings(stack) == []
    started = stack.temporal.list_workflows(
        f"WorkflowType = 'AutomationFiringWorkflow' AND TaskQueue = '{stack.settings.task_queue}'")
    assert [run async for run in started] == []


async def test_an_automation_without_the_webhook_trigger_is_unknown_to_it(stack: Stack, repo: Path) -> None:
    await _automation(stack, repo, name="scheduled", on="github:issues.opened")
    key = hmac.new(stack.settings.isolator_secret_key.get_secret_value().encode(),
                   b"automation-webhook:scheduled", hashlib.sha256).hexdigest()
    body = b"{}"
    called = await stack.api.post("/webhooks/automations/scheduled", content=body, headers=_signed(key, body))
    assert called.status_code == 404 and "webhook:call" in called.json()["detail"]
    assert (await stack.api.get("/api/automations/scheduled/webhook")).status_code == 404
    assert await _firings(stack) == []


async def test_without_the_secret_key_no_call_is_taken_and_the_operator_is_told_how_to_set_it(stack: Stack, repo: Path) -> None:
    await _automation(stack, repo)
    stack.settings.isolator_secret_key = None
    called = await stack.api.post("/webhooks/automations/alerts", content=b"{}",
                                  headers={"X-Isolator-Signature": "sha256=00"})
    assert called.status_code == 404 and "ISOLATOR_SECRET_KEY" in called.json()["detail"]
    shown = await stack.api.get("/api/automations/alerts/webhook")
    assert shown.status_code == 409 and "isolator secret-key" in shown.json()["detail"]
    assert await _firings(stack) == []


def test_a_json_object_s_string_fields_are_the_event_and_any_other_body_is_its_text() -> None:
    assert event_fields(json.dumps(ALERT).encode()) == {"title": "disk full on db-1", "body": "93% used"}
    assert event_fields(b"CPU at 99%\n") == {"body": "CPU at 99%\n"}
    assert event_fields(b"[1, 2]") == {"body": "[1, 2]"}
    assert event_fields(json.dumps({"bad key": "x", "t": "y" * 30000}).encode()) == {"t": "y" * 20000}
    assert len(event_fields(json.dumps({f"f{i}": "v" for i in range(80)}).encode())) == 50
