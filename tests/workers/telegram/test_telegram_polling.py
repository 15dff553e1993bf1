"""Telegram by polling (TELEGRAM_MODE=polling): the real poller and python-telegram-bot against a fake
Bot API that serves `getUpdates`, with the real app's workflows and agent runs on real Temporal, git and
PostgreSQL."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from activities.chat.platforms.telegram import make_deliverer
from isolator.contracts.approvals import Button, press_value
from isolator.contracts.message import ReplyInput
from isolator.settings import Settings
from tests.agents import command
from tests.conftest import Stack
from tests.fakes.telegram_api import BOT_TOKEN, FakeTelegram
from tests.platforms.telegram import PRIVATE, USER, _update_ids, callback_query, message, request_message
from tests.telegram_polling import handled, until
from api.platforms.telegram.poller import polling_telegram


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


async def test_a_press_by_polling_is_answered_once_even_when_telegram_gives_it_twice(
    stack: Stack, fake: FakeTelegram
) -> None:
    await stack.db.execute("DELETE FROM telegram_offsets")
    await make_deliverer(stack.settings)(ReplyInput(
        platform="telegram", conversation_id=f"{PRIVATE['id']}:0", text="May I run `git push`?",
        idempotency_key="k", buttons=[Button("Allow once", press_value("K7P2QX", "once"))]))
    query = callback_query(request_message(fake), press_value("K7P2QX", "once"), USER["id"], USER["username"])
    for _ in range(2):  # the same press in two updates, as after a poller's restart
        fake.push({"update_id": next(_update_ids), "callback_query": query})

    async with polling_telegram(stack.settings, stack.temporal, stack.db):
        await until(lambda: fake.pending == [] and fake.calls("getUpdates") >= 2)
        await until(lambda: len(fake.callback_answers) >= 1)

    assert [answer.callback_query_id for answer in fake.callback_answers] == [query["id"]], "answered once"
    assert fake.callback_answers[0].text == "There is no request K7P2QX waiting here."

