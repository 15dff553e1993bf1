"""Asking the human on Telegram: a request's buttons as an inline keyboard (the real python-telegram-bot
against the fake Bot API), and their presses as `callback_query` updates into the real app, checked by
api/approvals.py against real PostgreSQL and answered to the presser alone (answerCallbackQuery)."""

from __future__ import annotations

from typing import Any

import asyncpg
import pytest
from temporalio.exceptions import ApplicationError

from activities.chat.platforms.telegram import make_deliverer
from api.platforms.telegram.callbacks import NOT_OURS
from isolator.contracts.approvals import Button, press_value
from isolator.contracts.message import ReplyInput
from isolator.settings import Settings
from tests.approvals import TAKEN, answers_of, recorded_request, waiting_environment  # noqa: F401 - a fixture
from tests.conftest import Stack
from tests.fakes.telegram_api import CallbackAnswer, FakeTelegram
from tests.platforms.telegram import (
    FORUM,
    PRIVATE,
    USER,
    _update_ids,
    callback_query,
    post,
    press,
    request_message,
)
from tests.security.fuzzing import type_confusions

CODE = "K7P2QX"
OTHER = {"id": 444555666, "username": "bob"}  # allowed to talk to the bot, but did not start the run
STRANGER = {"id": 777888999, "username": "mallory"}  # not in TELEGRAM_ALLOWED_USERS
TOOL_BUTTONS = [Button("Allow once", press_value(CODE, "once"), "primary"),
                Button("Allow for this conversation", press_value(CODE, "conversation")),
                Button("Deny", press_value(CODE, "deny"), "danger")]


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"telegram_allowed_users": frozenset({str(USER["id"]), str(OTHER["id"])})})


def request(text: str = "May I run `git push`?", buttons: list[Button] = TOOL_BUTTONS,
            conversation_id: str = f"{PRIVATE['id']}:0") -> ReplyInput:
    return ReplyInput(platform="telegram", conversation_id=conversation_id, text=text, idempotency_key="k",
                      buttons=buttons)


async def an_approval(db: asyncpg.Pool, state: str = "pending", kind: str = "tool",
                      answered_by: str | None = None) -> str:
    """A run's request of USER's conversation, as the run records it; returns its environment's id."""
    return await recorded_request(db, "telegram", f"{PRIVATE['id']}:0", CODE, requested_by=str(USER["id"]), kind=kind,
                                  state=state, answered_by=answered_by)


async def state_of(db: asyncpg.Pool) -> str:
    return await db.fetchval("SELECT state FROM approvals WHERE code = $1", CODE)


# --- the request's buttons -------------------------------------------------------------------------


async def test_a_request_shows_its_buttons_and_its_answer_takes_them_away(
    settings: Settings, fake: FakeTelegram
) -> None:
    deliver = make_deliverer(settings)
    message_id = await deliver(request())
    assert message_id is not None
    sent = fake.sent[-1]
    # a long label: one button per row, each sending back its value; the styles colour them
    assert sent.reply_markup == {"inline_keyboard": [
        [{"text": "Allow once", "callback_data": f"isolator-approval:{CODE}:once", "style": "primary"}],
        [{"text": "Allow for this conversation", "callback_data": f"isolator-approval:{CODE}:conversation"}],
        [{"text": "Deny", "callback_data": f"isolator-approval:{CODE}:deny", "style": "danger"}],
    ]}
    assert request_message(fake) == sent

    assert await deliver(request("✅ Allowed once by @ada", buttons=[]), replacing=message_id) == message_id
    answered = fake.messages[int(message_id)]
    assert (answered.text, answered.reply_markup) == ("✅ Allowed once by @ada", None)
    assert not any(message.buttons for message in fake.messages.values()), "the answered request has no buttons"

    # short labels read best two to a row, in a forum topic too
    await deliver(request("Approve the plan?", [Button("Approve", press_value(CODE, "approve"), "primary"),
                                                Button("Revise", press_value(CODE, "revise"))], f"{FORUM['id']}:42"))
    plan = request_message(fake)
    assert (plan.chat_id, plan.message_thread_id) == (FORUM["id"], 42)
    assert plan.reply_markup is not None
    assert [[button["text"] for button in row] for row in plan.reply_markup["inline_keyboard"]] == [
        ["Approve", "Revise"]]


async def test_a_button_value_longer_than_telegram_takes_is_refused_for_good(
    settings: Settings, fake: FakeTelegram
) -> None:
    with pytest.raises(ApplicationError) as refused:
        await make_deliverer(settings)(request(buttons=[Button("Yes", "x" * 65)]))
    assert refused.value.non_retryable and "64 bytes" in refused.value.message
    assert fake.sent == []


# --- presses ---------------------------------------------------------------------------------------


async def pressed(stack: Stack, fake: FakeTelegram, button: str, user: dict = USER) -> CallbackAnswer:
    """Send the request, press `button` on it as `user`: the answer only the presser saw."""
    await make_deliverer(stack.settings)(request())
    response = await press(stack.api, request_message(fake), button, user["id"], user["username"])
    assert response.status_code == 200, response.text
    assert fake.callback_answers, "every press is answered, or the presser's button spins"
    return fake.callback_answers[-1]


async def test_a_press_of_an_unknown_request_is_told_to_the_presser(stack: Stack, fake: FakeTelegram) -> None:
    await make_deliverer(stack.settings)(request())
    query = callback_query(request_message(fake), press_value(CODE, "once"), USER["id"], "ada")
    response = await post(stack, {"update_id": next(_update_ids), "callback_query": query})
    assert response.json() == {"ok": True, "press": "unknown"}
    assert fake.callback_answers == [CallbackAnswer(query["id"], f"There is no request {CODE} waiting here.", True)]


async def test_a_press_by_someone_who_did_not_start_the_run_is_refused_privately(
    stack: Stack, fake: FakeTelegram
) -> None:
    await an_approval(stack.db)
    answer = await pressed(stack, fake, "Deny", OTHER)
    assert answer.show_alert and answer.text == "Only the person who started this run, or an admin, may answer it."
    assert await state_of(stack.db) == "pending"
    assert len(fake.sent) == 1, "nothing is said in the chat"


async def test_a_press_by_someone_the_bot_does_not_take_requests_from_is_refused_first(
    stack: Stack, fake: FakeTelegram
) -> None:
    await an_approval(stack.db)
    answer = await pressed(stack, fake, "Allow once", STRANGER)
    assert answer.show_alert and f"add your user id {STRANGER['id']} to it" in answer.text
    assert "TELEGRAM_ALLOWED_USERS" in answer.text and "`" not in answer.text, "alerts are plain text"
    assert await state_of(stack.db) == "pending"


async def test_a_press_on_an_answered_request_says_who_answered_it(stack: Stack, fake: FakeTelegram) -> None:
    await an_approval(stack.db, state="allowed", answered_by="@ada")
    answer = await pressed(stack, fake, "Deny")
    assert answer.show_alert and answer.text == "This request was already allowed by @ada."


async def test_the_starters_press_passes_the_checks_and_reaches_the_environment(
    stack: Stack, fake: FakeTelegram
) -> None:
    await an_approval(stack.db)  # its environment's workflow is not running: nothing waits any more
    answer = await pressed(stack, fake, "Allow once")
    assert answer.show_alert and answer.text == "This request no longer waits: its worktree is gone."


async def test_a_taken_press_gives_the_environment_its_answer_and_the_presser_a_toast(
    stack: Stack, fake: FakeTelegram, waiting_environment: Any
) -> None:
    environment = await an_approval(stack.db, kind="question")
    handle = await waiting_environment(environment)
    await make_deliverer(stack.settings)(request("Which database?", [
        Button("PostgreSQL", press_value(CODE, "option", 0)), Button("SQLite", press_value(CODE, "option", 1))]))
    response = await press(stack.api, request_message(fake), "SQLite")

    assert response.json() == {"ok": True, "press": "taken"}
    (decision,) = await answers_of(handle)
    assert (decision.choice, decision.option, decision.by) == ("option", 1, "@ada")
    assert fake.callback_answers[-1].show_alert is False and fake.callback_answers[-1].text == f"{TAKEN} by @ada"


# --- what the webhook refuses or ignores -----------------------------------------------------------


async def test_presses_without_the_secret_or_unreadable_are_refused_and_never_answered(
    stack: Stack, fake: FakeTelegram
) -> None:
    await make_deliverer(stack.settings)(request())
    query = callback_query(request_message(fake), press_value(CODE, "once"), USER["id"], "ada")
    wrong = await post(stack, {"update_id": next(_update_ids), "callback_query": query}, secret="wrong")
    unreadable = [
        await post(stack, {"update_id": next(_update_ids), "callback_query": {**query, "from": {**query["from"],
                                                                                              "id": "ada"}}}),
        await post(stack, {"update_id": next(_update_ids), "callback_query": {**query, "data": 5}}),
        await post(stack, {"update_id": next(_update_ids), "callback_query": {**query, "id": ""}}),
    ]
    assert wrong.status_code == 401
    assert [answer.status_code for answer in unreadable] == [400] * 3
    assert [f"`callback_query.{field}`" in answer.json()["detail"]
            for field, answer in zip(["from.id", "data", "id"], unreadable)] == [True] * 3
    assert fake.callback_answers == []


async def test_a_press_of_a_button_that_is_not_ours_is_answered_and_acknowledged(
    stack: Stack, fake: FakeTelegram
) -> None:
    await make_deliverer(stack.settings)(request(buttons=[Button("Vote", "poll:42:yes")]))
    response = await press(stack.api, request_message(fake), "Vote")
    assert response.status_code == 200 and response.json()["press"] == "not ours"
    assert fake.callback_answers[-1].show_alert and fake.callback_answers[-1].text == NOT_OURS


async def test_a_press_with_any_field_of_another_type_never_gets_a_5xx_nor_decides(
    stack: Stack, fake: FakeTelegram
) -> None:
    await an_approval(stack.db)
    await make_deliverer(stack.settings)(request())
    query = callback_query(request_message(fake), press_value(CODE, "deny"), OTHER["id"], "bob")
    for confused in type_confusions({"update_id": 1, "callback_query": query}):
        response = await post(stack, {**confused, "update_id": next(_update_ids)})
        assert response.status_code in (200, 400), (confused, response.text)
    assert await state_of(stack.db) == "pending"
