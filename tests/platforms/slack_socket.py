"""Slack over Socket Mode in the tests: the fake Socket Mode server beside the fake Web API, settings with
the app-level token, the service's socket client running in-process, and the envelopes' payloads."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, AsyncIterator

import asyncpg
import pytest
from pydantic import SecretStr
from temporalio.client import Client

from api.platforms.slack.socket import SlackSocket
from isolator.settings import Settings
from tests.fakes.slack_api import TEAM_ID, FakeSlack
from tests.fakes.slack_socket import APP_TOKEN, FakeSlackSocket
from tests.platforms.slack import CHANNEL, USER

# Short enough that a dead connection is noticed in a test's time; Slack's clients ping every 10 s.
PING_SECONDS = 0.5


@pytest.fixture
async def slack_socket(fake: FakeSlack) -> AsyncIterator[FakeSlackSocket]:
    socket = FakeSlackSocket(fake)
    await socket.start()
    yield socket
    await socket.stop()


@pytest.fixture
def socket_settings(settings: Settings, slack_socket: FakeSlackSocket) -> Settings:
    return settings.model_copy(update={"slack_app_token": SecretStr(APP_TOKEN)})


@contextlib.asynccontextmanager
async def socket_client(settings: Settings, temporal: Client, pool: asyncpg.Pool) -> AsyncIterator[None]:
    """One process's Socket Mode client, connecting and running for the block."""
    running = asyncio.create_task(SlackSocket(settings, temporal, pool, ping_interval=PING_SECONDS).run())
    try:
        yield
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)


def slash_command(text: str, trigger_id: str, user: str = USER, command: str = "/isolator") -> dict[str, Any]:
    """A slash command's payload as Slack sends it (over Socket Mode: the form's fields as JSON)."""
    return {"token": "XXYYZZ", "team_id": TEAM_ID, "team_domain": "isolator-test", "channel_id": CHANNEL,
            "channel_name": "isolator", "user_id": user, "user_name": user.lower(), "command": command,
            "text": text, "api_app_id": "A0APP00001", "is_enterprise_install": "false",
            "response_url": "https://hooks.slack.invalid/commands/T0TEAM0001/1/x", "trigger_id": trigger_id}
