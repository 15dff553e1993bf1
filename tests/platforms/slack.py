"""Slack in the tests: the fake Slack API fixture, settings that point at it, signed Events API requests,
and presses of a request's buttons as Slack's signed `block_actions` interactions."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import uuid
from typing import Any, AsyncIterator
from urllib.parse import urlencode

import httpx
import pytest
from pydantic import SecretStr
from temporalio.service import RPCError, RPCStatusCode

from isolator.contracts.message import Resolution, message_workflow_id
from isolator.settings import Settings
from tests.conftest import Stack
from tests.fakes.slack_api import BOT_ID, BOT_TOKEN, BOT_USER_ID, TEAM_ID, FakeSlack, Post
from workflows.message import MessageWorkflow

SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"  # the example secret of Slack's signing documentation


CHANNEL = "C0CHANNEL01"


USER = "U0PERSON01"


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    fake = FakeSlack()
    await fake.start()
    yield fake
    await fake.stop()


@pytest.fixture
def settings(settings: Settings, fake: FakeSlack) -> Settings:
    return settings.model_copy(
        update={
            "slack_signing_secret": SecretStr(SIGNING_SECRET),
            "slack_bot_token": SecretStr(BOT_TOKEN),
            "slack_api_url": fake.api_url,
        }
    )


def new_ts() -> str:
    """A fresh Slack message timestamp ("seconds.micros")."""
    return f"{int(time.time())}.{uuid.uuid4().int % 1_000_000:06d}"


def app_mention(ts: str, text: str, thread_ts: str | None = None) -> dict[str, Any]:
    event = {"type": "app_mention", "user": USER, "text": text, "ts": ts, "channel": CHANNEL, "event_ts": ts}
    return {**event, "thread_ts": thread_ts} if thread_ts else event


def message(ts: str, text: str, thread_ts: str | None = None, **fields: Any) -> dict[str, Any]:
    """A `message` event; a field given as None is left out (a bot_message has no `user`)."""
    event = {"type": "message", "channel": CHANNEL, "user": USER, "text": text, "ts": ts, "event_ts": ts,
             "channel_type": "channel", "thread_ts": thread_ts, **fields}
    return {key: value for key, value in event.items() if value is not None}


def event_callback(event: dict[str, Any]) -> dict[str, Any]:
    return {
        "token": "XXYYZZ",
        "team_id": TEAM_ID,
        "api_app_id": "A0APP00001",
        "event": event,
        "type": "event_callback",
        "event_id": f"Ev{uuid.uuid4().hex[:10].upper()}",
        "event_time": int(float(event["ts"])),
        "authorizations": [
            {"enterprise_id": None, "team_id": TEAM_ID, "user_id": BOT_USER_ID, "is_bot": True,
             "is_enterprise_install": False}
        ],
        "is_ext_shared_channel": False,
    }


def signed(body: bytes, secret: str = SIGNING_SECRET, timestamp: int | None = None) -> dict[str, str]:
    """Slack's signing scheme: HMAC-SHA256 of `v0:{timestamp}:{body}`, sent as `v0=<hex>`."""
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    digest = hmac.new(secret.encode(), f"v0:{stamp}:".encode() + body, hashlib.sha256).hexdigest()
    return {"content-type": "application/json", "x-slack-request-timestamp": stamp, "x-slack-signature": f"v0={digest}"}


async def post_signed(stack: Stack, payload: dict[str, Any], **headers: str) -> httpx.Response:
    body = json.dumps(payload).encode()
    return await stack.api.post("/webhooks/slack", content=body, headers={**signed(body), **headers})


async def send(stack: Stack, event: dict[str, Any], **headers: str) -> None:
    """Deliver one event as Slack does; it must be acknowledged."""
    response = await post_signed(stack, event_callback(event), **headers)
    assert response.status_code == 200, response.text


async def resolution(stack: Stack, ts: str) -> Resolution:
    """The result of the message's workflow; the webhook has started it before answering."""
    workflow_id = message_workflow_id("slack", f"{CHANNEL}:{ts}")
    return await stack.temporal.get_workflow_handle_for(MessageWorkflow.run, workflow_id).result()


async def started(stack: Stack, ts: str) -> bool:
    try:
        await stack.temporal.get_workflow_handle(message_workflow_id("slack", f"{CHANNEL}:{ts}")).describe()
    except RPCError as error:
        assert error.status == RPCStatusCode.NOT_FOUND
        return False
    return True


# --- buttons -------------------------------------------------------------------------------------


def buttons(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The button elements of a message's actions blocks, in order."""
    return [element for block in blocks if block.get("type") == "actions"
            for element in block["elements"] if element.get("type") == "button"]


def request_message(fake: FakeSlack) -> Post:
    """The last message posted that shows action buttons now (an answered request shows none)."""
    for post in reversed(fake.posts):
        if buttons(fake.blocks(post.ts)):
            return post
    raise AssertionError(f"no message with buttons among {len(fake.posts)} posted: {[p.text for p in fake.posts]}")


def block_actions(message: Post, button: dict[str, Any], user: str = USER) -> dict[str, Any]:
    """A `block_actions` interaction as Slack sends it for a press of `button` on `message` (trimmed)."""
    return {
        "type": "block_actions",
        "user": {"id": user, "username": user.lower(), "name": user.lower(), "team_id": TEAM_ID},
        "api_app_id": "A0APP00001",
        "token": "XXYYZZ",
        "container": {"type": "message", "message_ts": message.ts, "channel_id": message.channel,
                      "is_ephemeral": False, "thread_ts": message.thread_ts},
        "trigger_id": "1000000000.1000000000.0123456789abcdef",
        "team": {"id": TEAM_ID, "domain": "isolator-test"},
        "channel": {"id": message.channel, "name": "isolator"},
        "message": {"type": "message", "user": BOT_USER_ID, "bot_id": BOT_ID, "ts": message.ts,
                    "thread_ts": message.thread_ts, "text": message.text, "blocks": message.blocks},
        "response_url": "https://hooks.slack.invalid/actions/T0TEAM0001/1/x",
        "actions": [{"type": "button", "action_id": button["action_id"], "block_id": "b1",
                     "text": button["text"], "value": button["value"], "action_ts": new_ts(),
                     **({"style": button["style"]} if "style" in button else {})}],
    }


def interaction_body(payload: object) -> bytes:
    return urlencode({"payload": json.dumps(payload)}).encode()


async def post_interaction(client: httpx.AsyncClient, body: bytes, **headers: str) -> httpx.Response:
    """A form body posted to the Interactivity Request URL, signed as Slack signs it."""
    form = {**signed(body), "content-type": "application/x-www-form-urlencoded", **headers}
    return await client.post("/webhooks/slack/interactions", content=body, headers=form)


async def press(client: httpx.AsyncClient, message: Post, choice: str | int, user: str = USER) -> httpx.Response:
    """Press the button of `message` labelled `choice` (or at that index) as `user`; Slack needs its 200.

    The answer is given before the response returns in-process (httpx runs the background task first)."""
    shown = buttons(message.blocks or [])
    chosen = shown[choice] if isinstance(choice, int) else next(
        (button for button in shown if button["text"]["text"] == choice), None)
    assert chosen is not None, f"no button {choice!r} among {[button['text']['text'] for button in shown]}"
    response = await post_interaction(client, interaction_body(block_actions(message, chosen, user)))
    assert response.status_code == 200, response.text
    return response
