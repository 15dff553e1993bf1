"""Telegram's allow rule: a user not in TELEGRAM_ALLOWED_USERS gets one reply naming their id and
changes nothing; the users listed work as before."""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

import httpx
import pytest

from api.app import create_app
from isolator.contracts.message import message_workflow_id
from tests.conftest import Stack
from tests.fakes.telegram_api import FakeTelegram, Sent
from tests.platforms.telegram import GROUP, message, resolution, send
from tests.trust.checks import nothing_changed, recorded_as_refused

STRANGER = {"id": 555666777, "is_bot": False, "first_name": "Eve", "username": "eve"}
STRANGER_CHAT = {"id": 555666777, "first_name": "Eve", "username": "eve", "type": "private"}


async def test_a_user_not_allowed_is_answered_once_with_their_id_and_nothing_changes(
    stack: Stack, fake: FakeTelegram, repo: Path
) -> None:
    await stack.register(repo)
    first = await send(stack, message=message("delete everything", STRANGER_CHAT, **{"from": STRANGER}))
    refused = await resolution(stack, first)
    assert refused.outcome == "refused"
    assert fake.sent == [Sent(STRANGER_CHAT["id"], None, "I only take requests from the people in "
                              "`TELEGRAM_ALLOWED_USERS`. To allow you, add your user id `555666777` to it.")]
    for text in ("/status", "/clone https://github.com/octo-org/x", "please?"):
        update_id = await send(stack, message=message(text, STRANGER_CHAT, **{"from": STRANGER}))
        assert (await resolution(stack, update_id)).outcome == "refused", text
    assert len(fake.sent) == 1, "one reply per conversation and hour"
    await nothing_changed(stack, repo)
    listed = await recorded_as_refused(stack, "telegram", message_workflow_id("telegram", str(first)))
    assert listed["sender"] == "user 555666777 (@eve)"

    # In a group the allowed user's message is taken, the stranger's is not.
    allowed = await resolution(stack, await send(stack, message=message("@isolator fix it", GROUP)))
    stranger = await resolution(stack, await send(stack, message=message("@isolator me too", GROUP,
                                                                         **{"from": STRANGER})))
    assert (allowed.outcome, stranger.outcome) == ("created", "refused")


async def test_without_a_rule_everyone_is_refused_and_the_start_says_how_to_allow_them(
    stack: Stack, fake: FakeTelegram, repo: Path, caplog: pytest.LogCaptureFixture
) -> None:
    unset = stack.settings.model_copy(update={"telegram_allowed_users": frozenset()})
    with caplog.at_level(logging.WARNING):
        app = create_app(unset, temporal=stack.temporal, pool=stack.db)
    lines = [record.getMessage() for record in caplog.records if "TELEGRAM_ALLOWED_USERS" in record.getMessage()]
    assert lines == ["TELEGRAM_ALLOWED_USERS is not set: every Telegram message is refused. To allow people, set "
                     "TELEGRAM_ALLOWED_USERS=<user id>,<user id> (a refused person is told their id)."]
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://isolator.test") as api:
        served = dataclasses.replace(stack, api=api, settings=unset)  # the same workers, the app without a rule
        await served.register(repo)
        refused = await resolution(served, await send(served, message=message("hello")))
    assert refused.outcome == "refused" and "`111222333`" in refused.replies[0]
    await nothing_changed(stack, repo)
