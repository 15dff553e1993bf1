"""The doctor's Telegram check against the fake Bot API, through python-telegram-bot: its webhook as the
way updates come in wants it (TELEGRAM_MODE), beside the token and the last delivery's error."""

from __future__ import annotations

import pytest

from activities.doctor.telegram import telegram
from isolator.settings import Settings
from isolator.telegram_here import doing
from tests.fakes.telegram_api import FakeTelegram

ROUTE = "https://isolator.example.org/webhooks/telegram"


@pytest.fixture
def polls(settings: Settings) -> Settings:
    return settings.model_copy(update={"telegram_webhook_secret": None, "telegram_mode_setting": "polling"})


@pytest.fixture
def by_webhook(settings: Settings) -> Settings:
    return settings.model_copy(update={"public_url": "https://isolator.example.org", "telegram_mode_setting": None})


async def test_polling_with_a_webhook_set_is_a_problem_unless_this_process_polls(polls: Settings,
                                                                                 fake: FakeTelegram) -> None:
    assert (await telegram(polls)).ok, "no webhook: nothing to say"
    fake.webhook.update(url=ROUTE, pending_update_count=4)

    found = await telegram(polls)
    with doing("polling"):  # the poller of this process deletes it at its start
        here = await telegram(polls)

    assert not found.ok and "a webhook is set (https://isolator.example.org/webhooks/telegram)" in found.problem
    assert "TELEGRAM_MODE=polling" in found.problem and "409" in found.problem and "4 update(s)" in found.problem
    assert "poller deletes the webhook at start" in found.fix and "@BotFather" in found.fix
    assert here.ok, here


async def test_by_webhook_with_a_public_url_the_webhook_must_be_its_route(by_webhook: Settings,
                                                                           fake: FakeTelegram) -> None:
    unset = await telegram(by_webhook)
    fake.webhook_url = "https://old.example.org/hook"
    elsewhere = await telegram(by_webhook)
    fake.webhook_url = ROUTE
    right = await telegram(by_webhook)

    assert not unset.ok and f"the webhook is not set, not PUBLIC_URL/webhooks/telegram ({ROUTE})" in unset.problem
    assert not elsewhere.ok and "the webhook is https://old.example.org/hook, not" in elsewhere.problem
    assert "start the API again: it sets the webhook at start" in elsewhere.fix
    assert right.ok and ROUTE in right.detail
    fake.webhook_url = None
    with doing("setting the webhook"):  # this process's start is setting it: what it finds is not yet
        being_set = await telegram(by_webhook)
    assert being_set.ok, being_set

