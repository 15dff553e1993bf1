"""Discord without DISCORD_ALLOWED_GUILDS or DISCORD_ALLOWED_USERS refuses everyone, and the listener
logs at start the line that allows them."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from isolator.settings import Settings
from tests.conftest import Stack
from tests.fakes.discord_api import BOT_USER, GUILD_ID, FakeDiscord
from tests.platforms.discord import resolution
from tests.trust.checks import nothing_changed


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"discord_allowed_guilds": frozenset(), "discord_allowed_users": frozenset()})


@pytest.fixture
def warnings(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.WARNING)  # before the app and the listener start
    return caplog


async def test_everyone_is_refused_and_the_start_says_how_to_allow_them(
    warnings: pytest.LogCaptureFixture, stack: Stack, fake: FakeDiscord, repo: Path, listener: object
) -> None:
    lines = [record.getMessage() for record in warnings.get_records("setup")
             if record.getMessage().startswith("DISCORD_ALLOWED_GUILDS is not set")]
    # once by the interactions endpoint (the API), once by the Gateway listener: one line per process
    assert len(lines) == 2 and "DISCORD_ALLOWED_GUILDS=<server id>" in lines[0]
    await stack.register(repo)
    message = fake.message_create(f"<@{BOT_USER['id']}> hello")
    await fake.dispatch("MESSAGE_CREATE", message)
    refused = await resolution(stack, message["id"])
    assert refused.outcome == "refused" and f"`{GUILD_ID}`" in refused.replies[0]
    await nothing_changed(stack, repo)
