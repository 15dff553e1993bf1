"""A request's buttons in Slack: posted as Block Kit through the real slack-sdk to the fake Slack Web API,
taken away by the update that records the answer, and pressed as Slack's signed `block_actions`
interactions into the real app, answered through `answer_press` on real PostgreSQL and Temporal.

The in-process client returns after the app's background task: what a press did is recorded by then."""

from __future__ import annotations

import uuid
from typing import Any, AsyncIterator

import asyncpg
import httpx
import pytest
from temporalio.client import Client

from activities.chat.platforms.slack import SECTION_TEXT, blocks, make_deliverer
from api.app import create_app
from isolator.contracts.approvals import Button, press_value
from isolator.contracts.message import ReplyInput
from isolator.settings import Settings
from tests.approvals import answers_of, recorded_request, waiting_environment  # noqa: F401 - a fixture
from tests.fakes.slack_api import Ephemeral, FakeSlack, Post
from tests.platforms.slack import (
    CHANNEL,
    USER,
    block_actions,
    buttons,
    interaction_body,
    post_interaction,
    press,
    request_message,
    signed,
)
from tests.security.fuzzing import type_confusions

THREAD = "1700000000.000100"
OTHER = "U0OTHER001"
TOOL_BUTTONS = [
    Button("Allow once", press_value("K7P2QX", "once"), "primary"),
    Button("Allow for this conversation", press_value("K7P2QX", "conversation")),
    Button("Deny", press_value("K7P2QX", "deny"), "danger"),
]


@pytest.fixture
async def api(settings: Settings, db: asyncpg.Pool, temporal: Client) -> AsyncIterator[httpx.AsyncClient]:
    """The app alone: a press starts no work of the workers."""
    transport = httpx.ASGITransport(app=create_app(settings, temporal=temporal, pool=db))
    async with httpx.AsyncClient(transport=transport, base_url="http://isolator.test", timeout=60) as client:
        yield client


async def request(db: asyncpg.Pool, code: str, *, kind: str = "tool", state: str = "pending",
                  requested_by: str | None = USER) -> str:
    """An approval row (with the codebase, environment and run it needs); its environment's id."""
    return await recorded_request(db, "slack", f"{CHANNEL}:{THREAD}", code, requested_by=requested_by, kind=kind,
                                  state=state, answered_by=None if state == "pending" else "<@U0PERSON01>")


async def state(db: asyncpg.Pool, code: str) -> str:
    return await db.fetchval("SELECT state FROM approvals WHERE code = $1", code)


async def posted_request(settings: Settings, fake: FakeSlack, buttons_: list[Button] = TOOL_BUTTONS) -> Post:
    await make_deliverer(settings)(ReplyInput("slack", f"{CHANNEL}:{THREAD}", "May I run `git push`?",
                                              idempotency_key=f"ask-{uuid.uuid4()}", buttons=buttons_))
    return request_message(fake)


# --- the buttons, posted and taken away ----------------------------------------------------------


async def test_a_reply_with_buttons_is_posted_as_block_kit_and_its_update_takes_them_away(
    settings: Settings, fake: FakeSlack
) -> None:
    message = await posted_request(settings, fake)
    assert (message.channel, message.thread_ts, message.text) == (CHANNEL, THREAD, "May I run `git push`?")
    assert message.blocks == [
        {"type": "section", "text": {"type": "mrkdwn", "text": "May I run `git push`?"}},
        {"type": "actions", "elements": [
            {"type": "button", "action_id": "approval-0", "value": "isolator-approval:K7P2QX:once",
             "text": {"type": "plain_text", "text": "Allow once"}, "style": "primary"},
            {"type": "button", "action_id": "approval-1", "value": "isolator-approval:K7P2QX:conversation",
             "text": {"type": "plain_text", "text": "Allow for this conversation"}},
            {"type": "button", "action_id": "approval-2", "value": "isolator-approval:K7P2QX:deny",
             "text": {"type": "plain_text", "text": "Deny"}, "style": "danger"},
        ]},
    ]

    await make_deliverer(settings)(ReplyInput("slack", f"{CHANNEL}:{THREAD}", "✅ Allowed once by <@U0PERSON01>",
                                              idempotency_key="answered"), replacing=message.ts)
    (edit,) = fake.edits
    # An empty list is how chat.update takes blocks away (left out, Slack keeps the buttons).
    assert (edit.ts, edit.text, edit.blocks) == (message.ts, "✅ Allowed once by <@U0PERSON01>", [])
    assert fake.blocks(message.ts) == []
    with pytest.raises(AssertionError, match="no message with buttons"):
        request_message(fake)


async def test_a_reply_without_buttons_is_plain_text(settings: Settings, fake: FakeSlack) -> None:
    await make_deliverer(settings)(ReplyInput("slack", f"{CHANNEL}:{THREAD}", "done", idempotency_key="plain"))
    assert fake.posts[0].blocks is None


def test_long_text_and_many_buttons_fit_block_kits_limits() -> None:
    many = [Button(f"Option {number} " + "x" * 80, press_value("K7P2QX", "option", number)) for number in range(30)]
    text = ("a line of the plan\n" * 400).strip()
    built = blocks(text, many)
    sections = [block["text"]["text"] for block in built if block["type"] == "section"]
    assert "".join(sections) == text and all(len(part) <= SECTION_TEXT for part in sections)
    assert [len(block["elements"]) for block in built if block["type"] == "actions"] == [25, 5]
    assert all(len(button["text"]["text"]) <= 75 for button in buttons(built))
    assert len({button["action_id"] for button in buttons(built)}) == 30


# --- presses -------------------------------------------------------------------------------------


async def test_a_press_of_an_unknown_request_is_answered_to_the_presser_alone(
    settings: Settings, fake: FakeSlack, api: httpx.AsyncClient, db: asyncpg.Pool
) -> None:
    message = await posted_request(settings, fake)
    response = await press(api, message, "Allow once", user=OTHER)
    assert response.content == b"", "an empty 200: Slack keeps the message as it is"
    assert fake.ephemerals == [Ephemeral(CHANNEL, OTHER, THREAD, "There is no request `K7P2QX` waiting here.")]
    assert len(fake.posts) == 1 and fake.edits == [], "nothing said in the thread"


async def test_only_the_person_who_started_the_run_may_answer(
    settings: Settings, fake: FakeSlack, api: httpx.AsyncClient, db: asyncpg.Pool
) -> None:
    await request(db, "K7P2QX")
    message = await posted_request(settings, fake)
    await press(api, message, "Allow once", user=OTHER)
    assert fake.ephemerals == [Ephemeral(CHANNEL, OTHER, THREAD,
                                         "Only the person who started this run, or an admin, may answer it.")]
    assert await state(db, "K7P2QX") == "pending"
    assert buttons(fake.blocks(message.ts)), "the buttons stay for the person who may press them"


async def test_a_request_already_answered_says_by_whom(
    settings: Settings, fake: FakeSlack, api: httpx.AsyncClient, db: asyncpg.Pool
) -> None:
    await request(db, "K7P2QX", state="allowed")
    await press(api, await posted_request(settings, fake), "Deny")
    assert fake.ephemerals == [Ephemeral(CHANNEL, USER, THREAD,
                                         "This request was already allowed by <@U0PERSON01>.")]
    assert await state(db, "K7P2QX") == "allowed"


async def test_a_press_whose_worktree_is_gone_is_told_so(
    settings: Settings, fake: FakeSlack, api: httpx.AsyncClient, db: asyncpg.Pool
) -> None:
    await request(db, "K7P2QX")
    await press(api, await posted_request(settings, fake), "Allow once")
    assert [(note.user, note.text) for note in fake.ephemerals] == [
        (USER, "This request no longer waits: its worktree is gone.")]


@pytest.mark.parametrize("presser", [USER, "U0ADMIN001"])
async def test_a_press_reaches_the_environments_workflow_as_the_presser_s_decision(
    settings: Settings, fake: FakeSlack, db: asyncpg.Pool, temporal: Client, presser: str, waiting_environment: Any
) -> None:
    settings = settings.model_copy(update={"slack_admin_users": frozenset({"U0ADMIN001"})})
    transport = httpx.ASGITransport(app=create_app(settings, temporal=temporal, pool=db))
    environment = await request(db, "Q4ANSW", kind="question")
    options = [Button("Postgres", press_value("Q4ANSW", "option", 0)),
               Button("SQLite", press_value("Q4ANSW", "option", 1))]
    message = await posted_request(settings, fake, options)
    handle = await waiting_environment(environment)
    async with httpx.AsyncClient(transport=transport, base_url="http://isolator.test", timeout=60) as api:
        await press(api, message, "SQLite", user=presser)
    (decision,) = await answers_of(handle)
    assert (decision.choice, decision.option, decision.by, decision.text) == ("option", 1, f"<@{presser}>", "")
    assert fake.ephemerals == [], "a taken answer shows as the request's edited message, not privately"


async def test_a_button_that_is_not_ours_is_acknowledged_and_left_alone(
    settings: Settings, fake: FakeSlack, api: httpx.AsyncClient, db: asyncpg.Pool
) -> None:
    await request(db, "K7P2QX")
    message = await posted_request(settings, fake)
    foreign = {"action_id": "vote", "text": {"type": "plain_text", "text": "Vote"}, "value": "isolator-approval:K7P2QX"}
    response = await post_interaction(api, interaction_body(block_actions(message, foreign)))
    assert response.status_code == 200 and fake.ephemerals == [] and await state(db, "K7P2QX") == "pending"


# --- refused interactions ------------------------------------------------------------------------


async def test_a_badly_signed_press_is_refused_and_does_nothing(
    settings: Settings, fake: FakeSlack, api: httpx.AsyncClient, db: asyncpg.Pool
) -> None:
    await request(db, "K7P2QX")
    message = await posted_request(settings, fake)
    body = interaction_body(block_actions(message, buttons(message.blocks or [])[0]))
    for headers in (signed(body, secret="not-the-signing-secret"), signed(body, timestamp=1_500_000_000),
                    {"x-slack-signature": "", "x-slack-request-timestamp": ""}):
        response = await post_interaction(api, body, **headers)
        assert response.status_code == 401, response.text
        assert "Slack signature" in response.json()["detail"]
    assert fake.ephemerals == [] and fake.calls("chat.postEphemeral") == 0
    assert await state(db, "K7P2QX") == "pending"


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"", "expected a form with one `payload` field"),
        (b"payload=1&payload=2", "expected a form with one `payload` field"),
        (b"payload=%7Bnot+json", "`payload` is not JSON"),
        (interaction_body(["block_actions"]), "`payload` is not a JSON object"),
        (interaction_body({"type": "view_submission"}), "only block_actions interactions are answered"),
        (interaction_body({"type": "block_actions", "user": "U0PERSON01"}), "`user` is not an object"),
        (interaction_body({"type": "block_actions", "user": {"id": "../x"}}), "`user.id` is not a Slack user id"),
        (interaction_body({"type": "block_actions", "user": {"id": USER}, "channel": {"id": CHANNEL}}),
         "no channel id and message ts"),
        (interaction_body({"type": "block_actions", "user": {"id": USER}, "channel": {"id": CHANNEL},
                       "message": {"ts": THREAD}, "actions": {"value": "x"}}), "`actions` is not a list of objects"),
        (b"\xff\xfe", "the body is not UTF-8"),
    ],
)
async def test_a_malformed_interaction_is_refused_with_its_reason(
    fake: FakeSlack, api: httpx.AsyncClient, body: bytes, reason: str
) -> None:
    response = await post_interaction(api, body)
    assert response.status_code == 400, response.text
    assert reason in response.json()["detail"]
    assert fake.calls("chat.postEphemeral") == 0



async def test_signed_interactions_of_any_shape_never_get_a_5xx(
    settings: Settings, fake: FakeSlack, api: httpx.AsyncClient, db: asyncpg.Pool
) -> None:
    await request(db, "K7P2QX")
    message = await posted_request(settings, fake)
    valid = block_actions(message, buttons(message.blocks or [])[0], OTHER)
    for payload in [valid, *type_confusions(valid)]:
        response = await post_interaction(api, interaction_body(payload))
        assert response.status_code in (200, 400), (payload, response.text)
    assert await state(db, "K7P2QX") == "pending"
