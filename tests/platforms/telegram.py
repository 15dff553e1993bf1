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

from api.platforms.telegram.webhook import SECRET_HEADER
from isolator.contracts.message import ReplyInput, Resolution, message_workflow_id
from isolator.settings import Settings
from tests.conftest import Stack
from tests.fakes.telegram_api import BOT_TOKEN, BOT_USER, FakeTelegram, Sent
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


def request_message(fake: FakeTelegram) -> Sent:
    """The newest message that shows an inline keyboard now (a request waiting for its answer)."""
    waiting = [sent for _, sent in sorted(fake.messages.items()) if sent.buttons]
    assert waiting, "no message with buttons was sent"
    return waiting[-1]


_callback_ids = itertools.count(uuid.uuid4().int % 10**9 * 1000)


def callback_query(recorded: Sent, data: str, user_id: int, username: str | None) -> dict[str, Any]:
    """A press of a button of `recorded` (a message the fake recorded), as Telegram delivers it."""
    chat = ({"id": recorded.chat_id, "first_name": "Ada", "type": "private"} if recorded.chat_id > 0
            else {"id": recorded.chat_id, "title": "Team", "type": "supergroup",
                  "is_forum": recorded.message_thread_id is not None})
    message: dict[str, Any] = {"message_id": recorded.message_id, "from": BOT_USER, "chat": chat,
                               "date": int(time.time()), "text": recorded.text}
    if recorded.reply_markup is not None:
        message["reply_markup"] = recorded.reply_markup
    if recorded.message_thread_id is not None:
        message.update(message_thread_id=recorded.message_thread_id, is_topic_message=True)
    presser = {"id": user_id, "is_bot": False, "first_name": (username or "Someone").title()}
    if username is not None:
        presser["username"] = username
    return {"id": str(next(_callback_ids)), "from": presser, "message": message,
            "chat_instance": str(recorded.chat_id), "data": data}


async def press(client: httpx.AsyncClient, recorded: Sent, button: str | int, user_id: int = USER["id"],
                username: str | None = USER["username"]) -> httpx.Response:
    """Press one of `recorded`'s buttons (its label, or its index in reading order) as user `user_id`:
    the webhook gets the callback_query Telegram would send, with the secret header."""
    buttons = recorded.buttons
    chosen = buttons[button] if isinstance(button, int) else next(b for b in buttons if b["text"] == button)
    update = {"update_id": next(_update_ids), "callback_query": callback_query(recorded, chosen["callback_data"],
                                                                               user_id, username)}
    return await client.post("/webhooks/telegram", headers={SECRET_HEADER: WEBHOOK_SECRET}, json=update)
