"""Telegram by webhook with PUBLIC_URL: the API process sets the bot's webhook itself (setWebhook with the
secret, the updates the webhook reads), only when getWebhookInfo shows another; the real
python-telegram-bot against the fake Bot API, and the real `isolator dev` process."""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Callable

import asyncpg
import pytest
from temporalio.client import Client

from api.platforms.telegram.webhook_setup import set_webhook, telegram_updates
from isolator.settings import Settings
from tests.fakes.telegram_api import BOT_TOKEN, FakeTelegram
from tests.platforms.telegram import WEBHOOK_SECRET
from tests.telegram_polling import until

PUBLIC_URL = "https://isolator.example.org/"
ROUTE = "https://isolator.example.org/webhooks/telegram"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"public_url": PUBLIC_URL, "telegram_mode_setting": None})


async def test_the_webhook_is_set_with_the_secret_once(settings: Settings, fake: FakeTelegram) -> None:
    first = await set_webhook(settings)
    again = await set_webhook(settings)

    assert (first.state, again.state) == ("set", "already set")
    assert fake.calls("setWebhook") == 1 and fake.calls("getWebhookInfo") == 2
    assert fake.webhook_url == ROUTE and fake.webhook_secret == WEBHOOK_SECRET
    assert sorted(fake.webhook["allowed_updates"]) == ["callback_query", "message"]


async def test_another_url_or_a_failing_delivery_is_set_again(settings: Settings, fake: FakeTelegram) -> None:
    fake.webhook_url = "https://old.example.org/hook"
    assert (await set_webhook(settings)).state == "set"
    assert fake.webhook_url == ROUTE

    # A secret changed since it was set shows only as deliveries refused: it is set again, with this one.
    fake.webhook_secret = "an-older-secret"
    fake.webhook.update(last_error_date=1764300000, last_error_message="Wrong response from the webhook: 401 Unauthorized")
    assert (await set_webhook(settings)).state == "set"
    assert fake.calls("setWebhook") == 2 and fake.webhook_secret == WEBHOOK_SECRET


async def test_a_url_telegram_refuses_is_said_with_its_reason_and_no_secret(
    settings: Settings, fake: FakeTelegram, temporal: Client, db: asyncpg.Pool, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    settings = settings.model_copy(update={"public_url": "http://isolator.example.org"})

    async with telegram_updates(settings, temporal, db):
        await until(lambda: "the webhook cannot be set" in caplog.text)

    assert "an https url must be provided for webhook" in caplog.text.lower() and "PUBLIC_URL" in caplog.text
    assert fake.webhook_url is None
    assert BOT_TOKEN not in caplog.text and WEBHOOK_SECRET not in caplog.text


async def test_telegram_out_of_reach_is_waited_out(settings: Settings, fake: FakeTelegram, temporal: Client,
                                                   db: asyncpg.Pool) -> None:
    fake.outage = 2
    async with telegram_updates(settings, temporal, db):
        await until(lambda: fake.webhook_url == ROUTE)
    assert fake.outage == 0


async def test_isolator_dev_with_a_public_url_sets_the_webhook(start_dev: Callable, fake: FakeTelegram,
                                                                 tmp_path: Path) -> None:
    env = {"TELEGRAM_BOT_TOKEN": BOT_TOKEN, "TELEGRAM_API_URL": fake.api_url, "PUBLIC_URL": PUBLIC_URL,
           "TELEGRAM_WEBHOOK_SECRET": WEBHOOK_SECRET}
    dev = await asyncio.to_thread(start_dev, tmp_path / "data", None, env)

    await until(lambda: fake.webhook_url == ROUTE)
    assert fake.webhook_secret == WEBHOOK_SECRET and fake.calls("getUpdates") == 0
    assert BOT_TOKEN not in dev.logs() and WEBHOOK_SECRET not in dev.logs()


def test_without_the_secret_the_api_refuses_to_start(tmp_path: Path) -> None:
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "TELEGRAM_BOT_TOKEN": BOT_TOKEN,
           "PUBLIC_URL": PUBLIC_URL, "DATABASE_URL": "postgresql://nobody@127.0.0.1:1/none"}
    refused = subprocess.run([sys.executable, "-m", "workers.cli", "api"], env=env, capture_output=True, text=True,
                             timeout=60, cwd=Path(__file__).resolve().parents[3])

    assert refused.returncode == 2, refused.stderr
    assert "PUBLIC_URL (TELEGRAM_MODE=webhook) needs TELEGRAM_WEBHOOK_SECRET" in refused.stderr
    assert "TELEGRAM_MODE=polling" in refused.stderr and BOT_TOKEN not in refused.stderr
