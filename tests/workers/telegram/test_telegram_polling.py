"""Telegram by polling (TELEGRAM_MODE=polling): the real poller and python-telegram-bot against a fake
Bot API that serves `getUpdates`, with the real app's workflows and agent runs on real Temporal, git and
PostgreSQL."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from isolator.settings import Settings
from tests.agents import command
from tests.conftest import Stack
from tests.fakes.telegram_api import BOT_TOKEN, FakeTelegram
from tests.platforms.telegram import PRIVATE, _update_ids, message
from tests.telegram_polling import handled, until
from workers.telegram_poller import polling_telegram


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"telegram_webhook_secret": None, "telegram_mode_setting": "polling",
                                       "agent_command_line": command("reporter")})


async def test_a_message_by_polling_reaches_the_agent_and_its_answer_goes_back(
    stack: Stack, fake: FakeTelegram, repo: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    await stack.register(repo)
    fake.webhook_url = "https://isolator.example.org/webhooks/telegram"  # getUpdates answers 409 until it goes
    await stack.db.execute("DELETE FROM telegram_offsets")
    update_id = next(_update_ids)
    fake.push({"update_id": update_id, "message": message("please add answer.txt")})

    async with polling_telegram(stack.settings, stack.temporal, stack.db):
        await handled(stack, update_id)
        await until(lambda: any("You said: please add answer.txt" in sent.text and "— Done in" in sent.text
                                for sent in fake.messages.values()))

    assert fake.webhook_url is None, "the poller deleted the webhook"
    assert fake.allowed_updates is not None and {"message", "callback_query"} <= set(fake.allowed_updates)
    assert all(sent.chat_id == PRIVATE["id"] for sent in fake.sent)
    assert await stack.db.fetchval("SELECT next_offset FROM telegram_offsets") == update_id + 1
    assert BOT_TOKEN not in caplog.text, "the token is in every Bot API URL: no request line is logged"
