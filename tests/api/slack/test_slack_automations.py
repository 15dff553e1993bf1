"""Slack messages as automations' triggers (`on = ["slack:message:#alerts"]`, docs/automations.md): a
person's message in the channel, as Slack's Events API delivers it (signed, through the webhook), fires
each automation naming the channel, by name or id and pattern, once however often Slack delivers it;
bots' messages, our own, thread replies and other channels fire nothing.

Real Temporal, PostgreSQL and git, the real slack-bolt app against the fake Slack (conversations.info
names the channel), a small real agent (tests/agents/changer.py: its answer repeats the prompt); the
report place is the test adapter's `test:<conversation>`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.service import RPCError, RPCStatusCode

from isolator.settings import Settings
from tests.agents import command
from tests.conftest import Stack
from tests.fakes.slack_api import BOT_ID, BOT_USER_ID, FakeSlack
from tests.fakes.slack_socket import FakeSlackSocket
from tests.platforms.slack import event_callback, message, new_ts, send
from tests.platforms.slack_socket import socket_client
from tests.results import eventually

ALERTS = "C0ALERTS01"
OTHER = "C0RANDOM01"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"agent_command_line": command("changer")})


async def _make(stack: Stack, codebase: str, name: str, on: str) -> None:
    made = await stack.api.post("/api/automations", json={
        "name": name, "codebase": codebase, "on": [on], "report": "test:slack-reports",
        "prompt": "{{ event.user }} wrote in #{{ event.channel_name }}: {{ event.text }} ({{ event.permalink }})"})
    assert made.status_code == 201, made.text


async def _fired(stack: Stack, name: str, channel: str, ts: str) -> bool:
    try:
        await stack.temporal.get_workflow_handle(f"automation:{name}:slack-{channel}-{ts}").describe()
    except RPCError as error:
        assert error.status == RPCStatusCode.NOT_FOUND
        return False
    return True


async def test_a_message_in_the_channel_fires_its_automations_once_and_others_fire_nothing(
    stack: Stack, fake: FakeSlack, repo: Path
) -> None:
    fake.channels = {ALERTS: "alerts", OTHER: "random"}
    codebase = (await stack.register(repo))["name"]
    await _make(stack, codebase, "by-name", "slack:message:#alerts:disk (full|low)")
    await _make(stack, codebase, "by-id", f"slack:message:{ALERTS}")

    disk = new_ts()
    alert = message(disk, "disk full on db-1", channel=ALERTS)  # Slack's `message` event, as documented
    await send(stack, alert)
    await send(stack, alert, **{"x-slack-retry-num": "1", "x-slack-retry-reason": "http_timeout"})  # Slack's retry
    assert await _fired(stack, "by-name", ALERTS, disk) and await _fired(stack, "by-id", ALERTS, disk)

    cpu = new_ts()
    await send(stack, message(cpu, "cpu high on web-2", channel=ALERTS))
    assert await _fired(stack, "by-id", ALERTS, cpu) and not await _fired(stack, "by-name", ALERTS, cpu), \
        "the pattern decides"
    quiet = [new_ts() for _ in range(4)]
    await send(stack, message(quiet[0], "disk full", channel=OTHER))
    await send(stack, message(quiet[1], "disk full", channel=ALERTS, user=None, subtype="bot_message",
                              bot_id="B0OTHERBOT", username="monitor"))
    await send(stack, message(quiet[2], "disk full", channel=ALERTS, user=BOT_USER_ID, bot_id=BOT_ID))
    await send(stack, message(quiet[3], "disk full again", channel=ALERTS, thread_ts=disk))
    for ts in quiet:
        for name in ("by-name", "by-id"):
            assert not await _fired(stack, name, ALERTS, ts) and not await _fired(stack, name, OTHER, ts)

    started = [f"automation:{name}:slack-{ALERTS}-{ts}" for name, ts in (("by-name", disk), ("by-id", disk),
                                                                       ("by-id", cpu))]
    for workflow_id in started:
        end = await stack.temporal.get_workflow_handle(workflow_id).result()
        assert end["state"] == "done", end
    firings = await stack.db.fetch("SELECT workflow_id FROM automation_firings ORDER BY workflow_id")
    assert sorted(row["workflow_id"] for row in firings) == sorted(started)

    async def reported() -> bool:
        return sum("finished" in text for text in await stack.replies("slack-reports")) == 3

    await eventually(reported, "three reports", seconds=120)
    report = next(text for text in await stack.replies("slack-reports")
                  if "`by-name` finished" in text)
    assert "<untrusted-input>disk full on db-1</untrusted-input>" in report, report
    assert "<untrusted-input>alerts</untrusted-input>" in report
    assert f"https://isolator-test.slack.com/archives/{ALERTS}/p{disk.replace('.', '')}" in report
    asked = fake.server.received("GET", r"/api/conversations\.info")
    assert len(asked) == 2, "each channel's name is asked once, then cached"


async def test_over_the_socket_a_message_fires_before_its_acknowledgement_and_once(
    stack: Stack, fake: FakeSlack, slack_socket: FakeSlackSocket, socket_settings: Settings, repo: Path
) -> None:
    codebase = (await stack.register(repo))["name"]
    await _make(stack, codebase, "by-id", f"slack:message:{ALERTS}")
    ts = new_ts()
    async with socket_client(socket_settings, stack.temporal, stack.db):
        for _ in range(2):  # the envelope sent again, as Slack does when an acknowledgement is late
            envelope = await slack_socket.send("events_api", event_callback(message(ts, "disk full", channel=ALERTS)))
            await slack_socket.acked(envelope)
            assert await _fired(stack, "by-id", ALERTS, ts), "acknowledged once its firing has started"
        end = await stack.temporal.get_workflow_handle(f"automation:by-id:slack-{ALERTS}-{ts}").result()
    assert end["state"] == "done", end
    assert [row["workflow_id"] for row in await stack.db.fetch("SELECT workflow_id FROM automation_firings")] == \
        [f"automation:by-id:slack-{ALERTS}-{ts}"]
