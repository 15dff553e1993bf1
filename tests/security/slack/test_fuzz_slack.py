"""Fuzzing the Slack webhook with correctly signed bodies: never a 5xx, and nothing started for a
body the webhook refuses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from isolator.contracts.message import message_workflow_id
from tests.conftest import Stack
from tests.platforms.slack import (
    CHANNEL,
    app_mention,
    event_callback,
    message,
    new_ts,
    signed,
)
from tests.security.fuzzing import (
    bodies,
    draw_examples,
    settled_workflows,
    type_confusions,
    workflow_exists,
)

BASE_TS = "1700000000.000100"
VALID = [
    event_callback(app_mention(BASE_TS, "<@U0BOT00001> please look")),
    event_callback(app_mention(BASE_TS, "<@U0BOT00001> /status", thread_ts="1700000000.000001")),
    event_callback(message(BASE_TS, "and the logout", thread_ts="1700000000.000001")),
    event_callback(message(BASE_TS, "edited", subtype="message_changed")),
    event_callback(message(BASE_TS, "<@U0BOT00001> to the channel too", subtype="thread_broadcast",
                           thread_ts="1700000000.000001")),
    {"token": "XXYYZZ", "challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P", "type": "url_verification"},
]
# Text no workflow can carry: always among the examples, always refused.
UNUSABLE = [
    event_callback(app_mention(BASE_TS, "<@U0BOT00001> /worktree create \ud800")),
    event_callback(app_mention(BASE_TS, "<@U0BOT00001> /worktree create a\x00b")),
]


def fresh(body: bytes) -> tuple[bytes, str | None]:
    """The body with a new message ts (each example its own workflow), and that workflow's id if it has one."""
    try:
        payload = json.loads(body)
    except ValueError:
        return body, None
    event: Any = payload.get("event") if isinstance(payload, dict) else None
    if not isinstance(event, dict):
        return body, None
    if event.get("ts") == BASE_TS:
        event["ts"] = new_ts()
        body = json.dumps(payload).encode()
    channel, ts = event.get("channel"), event.get("ts")
    key = f"{channel}:{ts}" if isinstance(channel, str) and isinstance(ts, str) else None
    return body, key and message_workflow_id("slack", key)


async def post(stack: Stack, body: bytes) -> httpx.Response:
    return await stack.api.post("/webhooks/slack", content=body, headers=signed(body))


async def test_signed_garbage_never_gets_a_5xx_and_refused_bodies_start_nothing(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    unusable = [json.dumps(payload).encode() for payload in UNUSABLE]
    confused = [json.dumps(payload).encode() for payload in type_confusions(VALID[4])]
    drawn = draw_examples(bodies(VALID), 100)
    assert len(drawn) >= 80
    acknowledged: set[str] = set()
    refused = 0
    for number, original in enumerate(unusable + confused + drawn):
        body, workflow_id = fresh(original)
        response = await post(stack, body)
        assert response.status_code < 500, (body, response.text)
        if number < len(unusable):
            assert response.status_code == 400, response.text
            assert any(reason in response.text for reason in ("NUL character", "lone surrogate")), response.text
        if response.status_code == 200:
            if workflow_id:
                acknowledged.add(workflow_id)  # started, or rightly ignored (a bot, an edit, ...)
            continue
        refused += 1
        assert response.status_code in (400, 404), (body, response.text)
        if workflow_id and workflow_id not in acknowledged:
            assert not await workflow_exists(stack, workflow_id), (body, response.text)
    assert refused >= 20 and acknowledged, f"both sides reached: {refused} refused, {len(acknowledged)} taken"

    # A last, valid mention: once Temporal lists it, it lists everything started before it.
    ts = new_ts()
    response = await post(stack, json.dumps(event_callback(app_mention(ts, "<@U0BOT00001> hi"))).encode())
    assert response.status_code == 200, response.text
    sentinel = message_workflow_id("slack", f"{CHANNEL}:{ts}")
    listed = await settled_workflows(stack, [sentinel])
    assert listed <= acknowledged | {sentinel}, f"started for a refused body: {sorted(listed - acknowledged)}"
    assert len(listed) >= 5, "the mutated mentions that still parse did start work"
