"""Discord in the tests: the fake REST API and Gateway, settings that point at them, the Gateway
listener running against the fake, and interactions signed as Discord signs them (commands, and
presses of the buttons of a message the fake recorded)."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
import uuid
from typing import Any, AsyncIterator

import httpx
import pytest
from nacl.signing import SigningKey
from pydantic import SecretStr
from temporalio.service import RPCError, RPCStatusCode

from api.platforms.discord.webhook import SIGNATURE_HEADER, TIMESTAMP_HEADER
from isolator.contracts.message import Resolution, message_workflow_id
from isolator.settings import Settings
from tests.conftest import Stack
from tests.fakes.discord_api import (
    APPLICATION_ID,
    BOT_TOKEN,
    CHANNEL_ID,
    GUILD_ID,
    PERSON,
    FakeDiscord,
    FollowUp,
    SentMessage,
)
from workers.discord_listener import running_discord_listener
from workflows.message import MessageWorkflow

SIGNING_KEY = SigningKey.generate()  # the application's key pair; Discord holds the private half
# Interaction ids key workflows, and the Temporal server is shared by the whole session.
_interaction_ids = itertools.count(int(time.time() * 1000) << 22 | uuid.uuid4().int % (1 << 20))


@pytest.fixture
async def fake() -> AsyncIterator[FakeDiscord]:
    fake = FakeDiscord()
    await fake.start()
    yield fake
    await fake.stop()


@pytest.fixture
def settings(settings: Settings, fake: FakeDiscord) -> Settings:
    return settings.model_copy(update={
        "discord_bot_token": SecretStr(BOT_TOKEN),
        "discord_public_key": SIGNING_KEY.verify_key.encode().hex(),
        "discord_application_id": APPLICATION_ID,
        "discord_api_url": fake.api_url,
        # the fake's server, and its person anywhere (direct messages need a user rule)
        "discord_allowed_guilds": frozenset({GUILD_ID}),
        "discord_allowed_users": frozenset({PERSON["id"]}),
    })


@pytest.fixture
async def listener(stack: Stack, fake: FakeDiscord) -> AsyncIterator[asyncio.Task[None]]:
    """The Gateway listener of `isolator discord`, connected to the fake and ready."""
    async with running_discord_listener(stack.settings, stack.temporal, stack.db) as listening:
        await fake.wait_ready()
        yield listening
    assert not listening.done() or listening.cancelled() or listening.exception() is None


def signed(body: bytes, key: SigningKey = SIGNING_KEY, timestamp: str | None = None) -> dict[str, str]:
    timestamp = timestamp or str(int(time.time()))
    signature = key.sign(timestamp.encode() + body).signature.hex()
    return {SIGNATURE_HEADER: signature, TIMESTAMP_HEADER: timestamp, "content-type": "application/json"}


def slash_command(text: str | None, channel_id: str = CHANNEL_ID, **fields: Any) -> dict[str, Any]:
    """`/isolator <text>` as Discord sends it to the Interactions endpoint."""
    options = [] if text is None else [{"name": "text", "type": 3, "value": text}]
    return {
        "type": 2, "id": str(next(_interaction_ids)), "application_id": APPLICATION_ID,
        "token": f"interaction-token-{uuid.uuid4().hex}", "version": 1, "channel_id": channel_id,
        "channel": {"id": channel_id, "type": 0}, "guild_id": GUILD_ID, "locale": "en-US",
        "member": {"user": {"id": PERSON["id"], "username": "ada", "discriminator": "0"}, "roles": [],
                   "permissions": "0"},
        "data": {"id": "1", "name": "isolator", "type": 1, "options": options},
        **fields,
    }


def button_press(message: SentMessage | FollowUp, button: str | int, user_id: str = PERSON["id"], *,
                 guild_id: str | None = GUILD_ID, roles: tuple[str, ...] = ()) -> dict[str, Any]:
    """A press of one of the message's buttons (its label or its index, counting across rows) as Discord sends
    it to the Interactions endpoint: by a member of the server, or (`guild_id` None) in a direct message."""
    buttons = buttons_of(message)
    pressed = buttons[button] if isinstance(button, int) else next(b for b in buttons if b["label"] == button)
    channel_id = message.channel_id if isinstance(message, SentMessage) else CHANNEL_ID  # the fake's follow-ups
    user = {"id": user_id, "username": f"user{user_id[-4:]}", "discriminator": "0"}
    presser = ({"guild_id": guild_id, "member": {"user": user, "roles": list(roles), "permissions": "0"}}
               if guild_id is not None else {"user": user})
    return {
        "type": 3, "id": str(next(_interaction_ids)), "application_id": APPLICATION_ID,
        "token": f"interaction-token-{uuid.uuid4().hex}", "version": 1, "channel_id": channel_id,
        "channel": {"id": channel_id, "type": 0 if guild_id is not None else 1}, "locale": "en-US",
        "message": {"id": message.message_id, "channel_id": channel_id, "content": message.content,
                    "components": message.components},
        "data": {"custom_id": pressed["custom_id"], "component_type": 2},
        **presser,
    }


async def press(client: httpx.AsyncClient, message: SentMessage | FollowUp, button: str | int,
                user_id: str = PERSON["id"], **where: Any) -> httpx.Response:
    """Press a button of a message the fake recorded, as Discord would: signed, to `/webhooks/discord`."""
    raw = json.dumps(button_press(message, button, user_id, **where)).encode()
    return await client.post("/webhooks/discord", content=raw, headers=signed(raw))


def buttons_of(message: SentMessage | FollowUp) -> list[dict[str, Any]]:
    """The message's buttons, row after row."""
    return [component for row in message.components for component in row["components"]]


def request_message(fake: FakeDiscord) -> SentMessage | FollowUp | None:
    """The last message the bot sent with buttons (in a channel or as a follow-up), as it was sent."""
    with_buttons = [message for message in [*fake.sent, *fake.followups] if message.components]
    return max(with_buttons, key=lambda message: int(message.message_id), default=None)


async def post(stack: Stack, body: dict[str, Any] | bytes, headers: dict[str, str] | None = None) -> httpx.Response:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return await stack.api.post("/webhooks/discord", content=raw, headers=signed(raw) if headers is None else headers)


async def resolution(stack: Stack, message_key: str) -> Resolution:
    """The message's result, once the listener (which hears events a moment later) has started it."""
    assert await eventually(lambda: started(stack, message_key)), f"no workflow for message {message_key}"
    workflow_id = message_workflow_id("discord", message_key)
    return await stack.temporal.get_workflow_handle_for(MessageWorkflow.run, workflow_id).result()


async def started(stack: Stack, message_key: str) -> bool:
    try:
        await stack.temporal.get_workflow_handle(message_workflow_id("discord", message_key)).describe()
    except RPCError as error:
        assert error.status == RPCStatusCode.NOT_FOUND
        return False
    return True


async def eventually(check: Any, timeout: float = 15.0) -> Any:
    """Poll `check()` (sync or async) until it returns something truthy."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        value = await value if asyncio.iscoroutine(value) else value
        if value or time.monotonic() > deadline:
            return value
        await asyncio.sleep(0.05)
