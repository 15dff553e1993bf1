"""Asking the human on Discord: a request's buttons as the message's components (taken away when it is
edited to its outcome), and their presses, signed into the real Interactions endpoint: the allow rule
first, then `answer_press` on real PostgreSQL and Temporal, its refusals told to the presser alone."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import asyncpg
import pytest
from nacl.signing import SigningKey

from activities.chat.platforms.discord import make_deliverer
from isolator.contracts.approvals import Button, press_value
from isolator.contracts.message import ReplyInput
from isolator.settings import Settings
from tests.approvals import EnvironmentStandIn, recorded_request, waiting_environment  # noqa: F401 - a fixture
from tests.conftest import Stack
from tests.fakes.discord_api import APPLICATION_ID, CHANNEL_ID, PERSON, ROLE_ID, FakeDiscord, FollowUp, SentMessage
from tests.platforms.discord import button_press, buttons_of, post, press, request_message, signed

DEVELOPER = "1100000000000000700"  # a member with the server's `developers` role: allowed, but not the starter
STRANGER = "1100000000000000800"  # a member without it: the allow rule refuses them
EPHEMERAL = 64
REQUEST_BUTTONS = [Button("Allow once", press_value("K7P2QX", "once"), "primary"),
                   Button("Allow for this conversation", press_value("K7P2QX", "conversation")),
                   Button("Deny", press_value("K7P2QX", "deny"), "danger")]


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """In the fake's server, members with the `developers` role are allowed too."""
    return settings.model_copy(update={"discord_allowed_roles": frozenset({ROLE_ID})})


def reply(text: str, buttons: list[Button], key: str = "request", answers: str | None = None) -> ReplyInput:
    return ReplyInput(platform="discord", conversation_id=CHANNEL_ID, text=text, idempotency_key=key,
                      answers=answers, buttons=buttons)


async def approval(db: asyncpg.Pool, code: str, requested_by: str | None = PERSON["id"], *, kind: str = "tool",
                   state: str = "pending", answered_by: str | None = None) -> str:
    """A request a run made in the channel, as the run records it; returns its environment's id."""
    return await recorded_request(db, "discord", CHANNEL_ID, code, requested_by=requested_by, kind=kind, state=state,
                                  answered_by=answered_by)


def with_button(message: SentMessage | FollowUp, code: str, choice: str = "once") -> SentMessage | FollowUp:
    """The message as it would be with one button of another request (the fake recorded one request)."""
    button = {"type": 2, "style": 1, "label": "Allow once", "custom_id": press_value(code, choice)}
    return dataclasses.replace(message, components=[{"type": 1, "components": [button]}])


async def state_of(db: asyncpg.Pool, code: str) -> str:
    return await db.fetchval("SELECT state FROM approvals WHERE code = $1", code)


def told_only_the_presser(answer: Any) -> str:
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert (body["type"], body["data"]["flags"]) == (4, EPHEMERAL), body
    return body["data"]["content"]


async def test_a_request_shows_its_buttons_and_its_update_takes_them_away(
    settings: Settings, fake: FakeDiscord, db: asyncpg.Pool
) -> None:
    deliver = make_deliverer(settings, db)
    message_id = await deliver(reply("May I run `git push`?", REQUEST_BUTTONS))
    sent = request_message(fake)
    assert sent is not None and sent.message_id == message_id
    assert [row["type"] for row in sent.components] == [1]
    assert [(b["type"], b["style"], b["label"], b["custom_id"]) for b in buttons_of(sent)] == [
        (2, 1, "Allow once", "isolator-approval:K7P2QX:once"),
        (2, 2, "Allow for this conversation", "isolator-approval:K7P2QX:conversation"),
        (2, 4, "Deny", "isolator-approval:K7P2QX:deny"),
    ]

    await deliver(reply("✅ Allowed once by <@1>", [], key="outcome"), message_id)
    assert [(edit.content, edit.components) for edit in fake.edits] == [("✅ Allowed once by <@1>", [])]
    assert fake.message_of(sent)["components"] == []

    # A question of seven options: five buttons a row, then the rest on the next.
    options = [Button(f"option {n}", press_value("Q1W2E3", "option", n)) for n in range(7)]
    await deliver(reply("Which one?", options, key="question"))
    question = request_message(fake)
    assert question is not None and [len(row["components"]) for row in question.components] == [5, 2]
    assert buttons_of(question)[6]["custom_id"] == "isolator-approval:Q1W2E3:option:6"


async def test_a_slash_commands_request_is_a_follow_up_with_buttons(
    settings: Settings, fake: FakeDiscord, db: asyncpg.Pool
) -> None:
    deliver = make_deliverer(settings, db)
    await db.execute("INSERT INTO discord_interactions (interaction_id, application_id, token) VALUES ($1, $2, $3)",
                     "91", APPLICATION_ID, "request-token")
    fake.expect_interaction("request-token")
    follow_up = await deliver(reply("May I run `git push`?", REQUEST_BUTTONS, answers="interaction:91"))
    sent = request_message(fake)
    assert sent is not None and follow_up == f"follow-up:91:{sent.message_id}" and not fake.sent
    assert [b["custom_id"] for b in buttons_of(sent)] == [button.value for button in REQUEST_BUTTONS]

    await deliver(reply("❌ Denied by <@1>", [], key="outcome"), follow_up)
    assert [(edit.message_id, edit.content, edit.components) for edit in fake.followup_edits] == [
        (sent.message_id, "❌ Denied by <@1>", [])]


async def test_a_press_is_answered_by_the_one_answer_path_and_only_the_presser_hears_a_refusal(
    stack: Stack, fake: FakeDiscord, db: asyncpg.Pool
) -> None:
    deliver = make_deliverer(stack.settings, db)
    await deliver(reply("May I run `git push`?", REQUEST_BUTTONS))
    request = request_message(fake)
    assert request is not None
    await approval(db, "K7P2QX", requested_by=PERSON["id"])

    refused = told_only_the_presser(await press(stack.api, request, "Allow once", DEVELOPER, roles=(ROLE_ID,)))
    assert refused == "Only the person who started this run, or an admin, may answer it."
    # The allow rule comes first: a member it refuses decides nothing, even on their own request.
    await approval(db, "S7R4NG", requested_by=STRANGER)
    not_allowed = told_only_the_presser(await press(stack.api, with_button(request, "S7R4NG"), 0, STRANGER))
    assert "DISCORD_ALLOWED_ROLES" in not_allowed and STRANGER in not_allowed
    assert (await state_of(db, "K7P2QX"), await state_of(db, "S7R4NG")) == ("pending", "pending")

    # The starter passes every check; with no environment workflow waiting, nothing waits any more.
    gone = told_only_the_presser(await press(stack.api, request, "Deny", PERSON["id"]))
    assert gone == "This request no longer waits: its worktree is gone."

    assert told_only_the_presser(await press(stack.api, with_button(request, "NOPE42"), 0)) == \
        "There is no request `NOPE42` waiting here."

    await approval(db, "D0N3AA", state="allowed", answered_by="<@1100000000000000100>")
    assert told_only_the_presser(await press(stack.api, with_button(request, "D0N3AA", "deny"), 0)) == \
        "This request was already allowed by <@1100000000000000100>."


async def test_a_press_taken_is_handed_to_the_environments_workflow_with_who_pressed(
    stack: Stack, fake: FakeDiscord, db: asyncpg.Pool, waiting_environment: Any
) -> None:
    deliver = make_deliverer(stack.settings, db)
    await deliver(reply("Which one?", [Button(f"option {n}", press_value("Q1W2E3", "option", n)) for n in range(3)]))
    question = request_message(fake)
    assert question is not None
    environment = await approval(db, "Q1W2E3", kind="question")
    waiting = await waiting_environment(environment)

    taken = await press(stack.api, question, "option 2")
    assert taken.status_code == 200 and taken.json() == {"type": 6}, taken.text  # the workflow edits the message
    # In a direct message the presser is `user`, not `member` (the request being in that conversation).
    assert (await press(stack.api, question, 0, guild_id=None)).json() == {"type": 6}

    answers = await waiting.query(EnvironmentStandIn.answers)
    assert [(a.choice, a.option, a.by) for a in answers] == [
        ("option", 2, f"<@{PERSON['id']}>"), ("option", 0, f"<@{PERSON['id']}>")]


async def test_a_bad_signature_or_a_malformed_press_starts_nothing(stack: Stack, fake: FakeDiscord) -> None:
    await make_deliverer(stack.settings, stack.db)(reply("May I run `git push`?", REQUEST_BUTTONS))
    request = request_message(fake)
    assert request is not None
    body = json.dumps(button_press(request, "Allow once")).encode()
    forged = await post(stack, body, headers=signed(body, key=SigningKey.generate()))
    assert forged.status_code == 401

    for broken, reason in [
        ({"data": {"component_type": 2}}, "`data.custom_id` must be a string of 1 to 100 characters"),
        ({"data": {"component_type": 2, "custom_id": "x" * 101}}, "`data.custom_id`"),
        ({"data": None}, "needs `data`"),
        ({"channel_id": "general", "channel": None}, "`channel_id` must be a snowflake"),
        ({"member": None}, "needs a snowflake `guild_id` and its `member`"),
    ]:
        answer = await post(stack, {**button_press(request, 0), **broken})
        assert answer.status_code == 400 and reason in answer.json()["detail"], (broken, answer.text)

    # Discord's other components, and buttons that are not isolator's, are answered, to the presser alone.
    select = {**button_press(request, 0), "data": {"component_type": 3, "custom_id": "menu", "values": ["a"]}}
    assert "only isolator's buttons" in told_only_the_presser(await post(stack, select))
    for custom_id in ["someone-else:1", "isolator-approval:a\x00b:once", "isolator-approval:a\udfffb:once",
                      "isolator-approval:K7P2QX:option:\u00b2"]:
        foreign = {**button_press(request, 0), "data": {"component_type": 2, "custom_id": custom_id}}
        assert told_only_the_presser(await post(stack, foreign)) == "This button is not one of isolator's requests."

