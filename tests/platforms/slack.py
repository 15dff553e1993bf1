"""Slack in the tests: the fake Slack API fixture, settings that point at it, and signed Events API requests."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import uuid
from typing import Any, AsyncIterator

import httpx
import pytest
from pydantic import SecretStr
from temporalio.service import RPCError, RPCStatusCode

from isolator.contracts.message import Resolution, message_workflow_id
from isolator.settings import Settings
from tests.conftest import Stack
from tests.fakes.slack_api import BOT_TOKEN, BOT_USER_ID, TEAM_ID, FakeSlack
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
