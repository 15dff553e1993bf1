"""Two pollers of one bot (two API processes with TELEGRAM_MODE=polling): Telegram answers 409, each says
so once and waits its turn, and every update is handled once. Real pollers and python-telegram-bot
against a fake Bot API, with the real app's workflows on real Temporal, git and PostgreSQL."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from isolator.settings import Settings
from tests.conftest import Stack
from tests.fakes.telegram_api import FakeTelegram
from tests.gitrepos import first_replies
from tests.platforms.telegram import started
from tests.telegram_polling import handled, update_in_new_chat
from api.platforms.telegram import poller as telegram_poller
from api.platforms.telegram.poller import polling_telegram
from workflows.naming import thread_branch


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"telegram_webhook_secret": None, "telegram_mode_setting": "polling"})


async def test_a_second_poller_gets_409_and_nothing_is_handled_twice(
    stack: Stack, fake: FakeTelegram, repo: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(telegram_poller, "CONFLICT_SECONDS", 0.3)  # turns come quickly: more updates fetched twice
    caplog.set_level(logging.WARNING, logger=telegram_poller.__name__)
    await stack.register(repo)
    await stack.db.execute("DELETE FROM telegram_offsets")
    fake.conflict = True  # a poller elsewhere has the bot
    updates = [update_in_new_chat(f"fix it {n}") for n in range(4)]
    fake.push(updates[0][1])

    async with polling_telegram(stack.settings, stack.temporal, stack.db):
        async with polling_telegram(stack.settings, stack.temporal, stack.db):
            await asyncio.sleep(1.5)
            assert not await started(stack, updates[0][1]["update_id"]), "nothing is handled while Telegram answers 409"
            fake.conflict = False
            for _, update in updates[1:]:
                fake.push(update)
            for _, update in updates:
                await handled(stack, update["update_id"])
            await asyncio.sleep(1.5)  # the two pollers go on taking turns: a second handling would show by now

    for chat_id, _ in updates:
        branch = thread_branch(f"telegram:{chat_id}:0")
        assert [sent.text for sent in fake.sent if sent.chat_id == chat_id] == first_replies(branch, repo)
    told = [record for record in caplog.records if "another poller" in record.getMessage()]
    assert len(told) == 2, "each poller says once that another has the bot"
    assert fake.calls("getUpdates") > 2 * len(updates), "the two went on asking, each ending the other's requests"
