"""Telegram in the tests: the fake Bot API fixture, settings that point at it, and updates shaped like Telegram's."""

from __future__ import annotations

import itertools
import re
import time
import uuid
from typing import Any, AsyncIterator

import httpx
import pytest
from pydantic import SecretStr
from temporalio.service import RPCError, RPCStatusCode

from api.webhooks.telegram import SECRET_HEADER
from isolator.contracts.message import ReplyInput, Resolution, message_workflow_id
from isolator.settings import Settings
from tests.conftest import Stack
from tests.fakes.telegram_api import BOT_TOKEN, FakeTelegram
from workflows.message import MessageWorkflow

WEBHOOK_SECRET = "isolator-webhook-secret_0123"  # setWebhook allows A-Z, a-z, 0-9, _ and -


USER = {"id": 111222333, "is_bot": False, "first_name": "Ada", "username": "ada", "language_code": "en"}


PRIVATE = {"id": 111222333, "first_name": "Ada", "username": "ada", "type": "private"}


GROUP = {"id": -1001234567890, "title": "Team", "type": "supergroup"}


FORUM = {"id": -1009876543210, "title": "Team forum", "type": "supergroup", "is_forum": True}


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    fake = FakeTelegram()
    await fake.start()
    yield fake
    await fake.stop()


@pytest.fixture
def settings(settings: Settings, fake: FakeTelegram) -> Settings:
    return settings.model_copy(
        update={
            "telegram_webhook_secret": SecretStr(WEBHOOK_SECRET),
            "telegram_bot_token": SecretStr(BOT_TOKEN),
            "telegram_api_url": fake.api_url,
            "telegram_allowed_users": frozenset({str(USER["id"])}),
        }
    )


# update_id is the workflow's key and the Temporal server is shared by the whole session.
_update_ids = itertools.count(uuid.uuid4().int % 10**9 * 1000)


_message_ids = itertools.count(100)


def entities(text: str) -> list[dict[str, Any]]:
    """The `bot_command` and `mention` entities Telegram adds (ASCII text: UTF-16 offsets are indices)."""
    found = [{"type": "bot_command", "offset": 0, "length": len(text.split()[0])}] if text.startswith("/") else []
    found += [{"type": "mention", "offset": m.start(), "length": len(m.group())} for m in re.finditer(r"@\w+", text)]
    return found


def message(text: str | None, chat: dict[str, Any] = PRIVATE, **fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"message_id": next(_message_ids), "from": USER, "chat": chat, "date": int(time.time())}
    if text is not None:
        body.update(text=text, entities=entities(text))
    return {**body, **fields}


def in_topic(text: str, topic: int) -> dict[str, Any]:
    """A message in a forum topic: it "replies" to the topic's creation message, as Telegram sends it."""
    created = {"message_id": topic, "from": USER, "chat": FORUM, "date": int(time.time()), "message_thread_id": topic,
               "is_topic_message": True, "forum_topic_created": {"name": "Fix CI", "icon_color": 7322096}}
    return message(text, FORUM, message_thread_id=topic, is_topic_message=True, reply_to_message=created)


async def post(stack: Stack, body: dict[str, Any] | bytes, secret: str | None = WEBHOOK_SECRET) -> httpx.Response:
    headers = {SECRET_HEADER: secret} if secret is not None else {}
    if isinstance(body, bytes):
        return await stack.api.post("/webhooks/telegram", headers=headers, content=body)
    return await stack.api.post("/webhooks/telegram", headers=headers, json=body)


async def send(stack: Stack, **update: Any) -> int:
    """Deliver one update as Telegram does; it must be acknowledged. Returns its update_id."""
    update_id = update.setdefault("update_id", next(_update_ids))
    response = await post(stack, update)
    assert response.status_code == 200, response.text
    return update_id


async def resolution(stack: Stack, update_id: int) -> Resolution:
    workflow_id = message_workflow_id("telegram", str(update_id))
    return await stack.temporal.get_workflow_handle_for(MessageWorkflow.run, workflow_id).result()


async def started(stack: Stack, update_id: int) -> bool:
    try:
        await stack.temporal.get_workflow_handle(message_workflow_id("telegram", str(update_id))).describe()
    except RPCError as error:
        assert error.status == RPCStatusCode.NOT_FOUND
        return False
    return True


async def nothing_happened(stack: Stack, fake: FakeTelegram, *update_ids: int) -> None:
    assert [await started(stack, update_id) for update_id in update_ids] == [False] * len(update_ids)
    assert await stack.db.fetchval("SELECT count(*) FROM conversations") == 0
    assert fake.sent == []


def reply(conversation_id: str = f"{PRIVATE['id']}:0") -> ReplyInput:
    return ReplyInput(platform="telegram", conversation_id=conversation_id, text="hello", idempotency_key="k")
