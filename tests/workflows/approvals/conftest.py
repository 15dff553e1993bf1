"""Asking the human on each platform, end to end (the tests beside this file): a person's message in a
Slack thread, a Telegram chat, a Discord thread or a GitHub issue starts the real Claude Code (against
the fake Anthropic API), a rule makes its call wait, the request comes into the conversation with the
platform's own buttons (the real SDKs against the fake platform APIs; on GitHub, the comments that
answer it), and a press (the signed webhook the platform would send) resumes the session: allowed, the
command runs and the run ends with its answer; denied, it never runs and the agent is told. Another
person's press is refused to them alone and decides nothing. Real git, PostgreSQL, Temporal and
bubblewrap. The test adapter's: tests/workflows/test_approvals.py. Here: every platform set up at
once, each against its fake API; the shared scripts and names are in tests/approvals.py."""

from __future__ import annotations

from pathlib import Path
from typing import AsyncIterator

import pytest
from pydantic import SecretStr

from isolator.settings import Settings
from tests.agent_clis import claude_binary, use_fake_anthropic
from tests.approvals import TELEGRAM_OTHER, use_approvals
from tests.conftest import Stack
from tests.fakes.anthropic_api import FakeAnthropicApi
from tests.fakes.discord_api import APPLICATION_ID as DISCORD_APPLICATION
from tests.fakes.discord_api import BOT_TOKEN as DISCORD_TOKEN
from tests.fakes.discord_api import GUILD_ID, PERSON, ROLE_ID, FakeDiscord
from tests.fakes.github_api import TOKEN as GITHUB_TOKEN
from tests.fakes.github_api import FakeGitHub
from tests.fakes.slack_api import BOT_TOKEN as SLACK_TOKEN
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import BOT_TOKEN as TELEGRAM_TOKEN
from tests.fakes.telegram_api import FakeTelegram
from tests.platforms import discord as discord_platform
from tests.platforms import github as github_platform
from tests.platforms import slack as slack_platform
from tests.platforms import telegram as telegram_platform

@pytest.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    fake = FakeSlack()
    await fake.start()
    yield fake
    await fake.stop()


@pytest.fixture
async def telegram() -> AsyncIterator[FakeTelegram]:
    fake = FakeTelegram()
    await fake.start()
    yield fake
    await fake.stop()


@pytest.fixture
async def discord() -> AsyncIterator[FakeDiscord]:
    fake = FakeDiscord()
    await fake.start()
    yield fake
    await fake.stop()


@pytest.fixture
async def github() -> AsyncIterator[FakeGitHub]:
    fake = FakeGitHub()
    await fake.start()
    yield fake
    await fake.stop()


@pytest.fixture
def settings(settings: Settings, slack: FakeSlack, telegram: FakeTelegram, discord: FakeDiscord,
             github: FakeGitHub) -> Settings:
    """Every platform set up at once, each against its fake API."""
    return settings.model_copy(update={
        "slack_signing_secret": SecretStr(slack_platform.SIGNING_SECRET),
        "slack_bot_token": SecretStr(SLACK_TOKEN),
        "slack_api_url": slack.api_url,
        "telegram_webhook_secret": SecretStr(telegram_platform.WEBHOOK_SECRET),
        "telegram_bot_token": SecretStr(TELEGRAM_TOKEN),
        "telegram_api_url": telegram.api_url,
        "telegram_allowed_users": frozenset({str(telegram_platform.USER["id"]), str(TELEGRAM_OTHER["id"])}),
        "discord_bot_token": SecretStr(DISCORD_TOKEN),
        "discord_public_key": discord_platform.SIGNING_KEY.verify_key.encode().hex(),
        "discord_application_id": DISCORD_APPLICATION,
        "discord_api_url": discord.api_url,
        "discord_allowed_guilds": frozenset({GUILD_ID}),
        "discord_allowed_users": frozenset({PERSON["id"]}),
        "discord_allowed_roles": frozenset({ROLE_ID}),
        "github_webhook_secret": SecretStr(github_platform.SECRET),
        "github_token": SecretStr(GITHUB_TOKEN),
        "github_api_url": github.api_url,
    })


@pytest.fixture
async def claude(stack: Stack, repo: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeAnthropicApi]:
    async with FakeAnthropicApi() as api:
        use_fake_anthropic(monkeypatch, api)
        stack.settings.agent_driver, stack.settings.agent_executable = "claude", str(claude_binary())
        use_approvals(stack)
        await stack.register(repo, url=github_platform.URL)  # its GitHub project too
        yield api
