"""Telegram end to end: Bot API updates into the real app, workflows on real Temporal, git and
PostgreSQL, and replies through the real python-telegram-bot to a fake Bot API."""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path

import pytest
from pydantic import SecretStr
from temporalio.exceptions import ApplicationError

from activities.chat.platforms.telegram import make_deliverer
from api.platforms.telegram.webhook import SECRET_HEADER, parse_update, read_message
from isolator.settings import Settings
from tests.conftest import Stack
from tests.fakes.telegram_api import BOT_USER, FakeTelegram, Sent
from tests.gitrepos import first_replies, worktree_paths
from tests.platforms.telegram import (
    FORUM,
    GROUP,
    PRIVATE,
    USER,
    WEBHOOK_SECRET,
    _update_ids,
    in_topic,
    message,
    nothing_happened,
    post,
    reply,
    resolution,
    send,
)
from workflows.naming import thread_branch

# --- updates shaped like the Bot API's documented Update objects ---------------------------------


# --- the flow ------------------------------------------------------------------------------------


async def test_a_private_message_creates_a_worktree_replies_and_the_next_reuses_it(
    stack: Stack, fake: FakeTelegram, repo: Path
) -> None:
    await stack.register(repo)
    branch = thread_branch(f"telegram:{PRIVATE['id']}:0")

    began = time.monotonic()
    first = await send(stack, message=message("fix the login bug"))
    assert time.monotonic() - began < 2, "the webhook answers once the workflow is started"
    created = await resolution(stack, first)
    expected_path = stack.settings.worktree_base.resolve() / "project" / branch
    assert (created.outcome, created.branch, created.working_path) == ("created", branch, str(expected_path))
    assert (expected_path / "file0.txt").is_file()
    assert worktree_paths(repo) == [str(expected_path)]
    rows = await stack.db.fetch("SELECT workflow_id, branch_name FROM isolation_environments WHERE status = 'active'")
    assert [(row["workflow_id"], row["branch_name"]) for row in rows] == [(f"telegram:{PRIVATE['id']}:0", branch)]
    # No agent is configured: the first message is told so at once, after the worktree's line.
    assert fake.sent == [Sent(PRIVATE["id"], None, text) for text in first_replies(branch, repo)]

    reused = await resolution(stack, await send(stack, message=message("and the logout bug")))
    assert (reused.outcome, reused.environment_id) == ("reused", created.environment_id)
    assert len(fake.sent) == 2, "reuse is silent: that no agent answers was said once, on the first message"


async def test_a_forum_topic_gets_its_own_worktree_and_replies_go_to_the_topic(
    stack: Stack, fake: FakeTelegram, repo: Path
) -> None:
    await stack.register(repo)
    topic = await resolution(stack, await send(stack, message=in_topic("@isolator fix the CI", topic=42)))
    general = await resolution(stack, await send(stack, message=message("@isolator, hello", FORUM)))

    assert (topic.outcome, topic.branch) == ("created", thread_branch(f"telegram:{FORUM['id']}:42"))
    assert (general.outcome, general.branch) == ("created", thread_branch(f"telegram:{FORUM['id']}:0"))
    assert sorted(worktree_paths(repo)) == sorted([topic.working_path, general.working_path])
    assert fake.sent == [
        *(Sent(FORUM["id"], 42, text) for text in first_replies(topic.branch, repo)),
        *(Sent(FORUM["id"], None, text) for text in first_replies(general.branch, repo)),
    ], "each topic is a conversation of its own, told once that no agent answers"


async def test_requests_without_the_secret_or_oversized_start_nothing(stack: Stack, fake: FakeTelegram) -> None:
    ids = [next(_update_ids) for _ in range(3)]
    missing = await post(stack, {"update_id": ids[0], "message": message("hi")}, secret=None)
    wrong = await post(stack, {"update_id": ids[1], "message": message("hi")}, secret=WEBHOOK_SECRET + "x")
    huge = await post(stack, {"update_id": ids[2], "message": message("x" * (1024 * 1024 + 1))})
    assert (missing.status_code, wrong.status_code, huge.status_code) == (401, 401, 413)
    assert SECRET_HEADER in missing.json()["detail"]
    await nothing_happened(stack, fake, *ids)


async def test_bodies_that_are_not_updates_are_refused_with_a_reason(stack: Stack, fake: FakeTelegram) -> None:
    update_id = next(_update_ids)
    answers = [
        await post(stack, b"{not json"),
        await post(stack, b"\xff\xfe"),
        await post(stack, b"[1, 2]"),
        await post(stack, b"[" * 100_000),
        await post(stack, {"message": message("hi")}),
        await post(stack, {"update_id": update_id, "message": {"message_id": 1, "text": "no chat, no date"}}),
        await post(stack, {"update_id": update_id, "message": message("hi", chat={"id": "me", "type": "private"})}),
        await post(stack, {"update_id": update_id, "message": {**message("hi"), "text": 5}}),
        await post(stack, {"update_id": update_id, "message": {**message("@isolator"), "entities": [
            {"type": "mention", "offset": "0", "length": 9}]}}),
    ]
    assert [answer.status_code for answer in answers] == [400] * len(answers)
    assert [answers[i].json()["detail"] for i in (0, 1, 3)] == ["the body is not JSON"] * 3
    assert "expected a JSON object" in answers[2].json()["detail"]
    assert "update_id" in answers[4].json()["detail"]
    await nothing_happened(stack, fake, update_id)


async def test_the_same_update_delivered_twice_is_answered_once(stack: Stack, fake: FakeTelegram, repo: Path) -> None:
    await stack.register(repo)
    update = {"update_id": next(_update_ids), "message": message("work on it")}
    await send(stack, **update)
    await send(stack, **update)  # while the first may still run: it joins it
    await resolution(stack, update["update_id"])
    await send(stack, **update)  # after it finished: recognised and refused
    assert [sent.text for sent in fake.sent] == first_replies(thread_branch(f"telegram:{PRIVATE['id']}:0"), repo)
    assert len(worktree_paths(repo)) == 1


async def test_updates_not_for_the_bot_are_acknowledged_and_start_nothing(
    stack: Stack, fake: FakeTelegram, repo: Path
) -> None:
    await stack.register(repo)
    bot_sender = {"id": 999, "is_bot": True, "first_name": "Other", "username": "other_bot"}
    ids = [
        await send(stack, edited_message={**message("fix it"), "edit_date": int(time.time())}),
        await send(stack, message=message(None, sticker={"file_id": "x", "file_unique_id": "y", "type": "regular",
                                                         "width": 512, "height": 512, "is_animated": False,
                                                         "is_video": False})),
        await send(stack, message=message(None, GROUP, new_chat_members=[USER])),
        await send(stack, message=message("@isolator fix it", GROUP, **{"from": bot_sender})),
        await send(stack, message=message("just chatting about isolator", GROUP)),
        await send(stack, message=message("/status@other_bot", GROUP)),
        await send(stack, callback_query={"id": "1", "from": USER, "chat_instance": "1", "data": "x"}),
    ]
    await nothing_happened(stack, fake, *ids)


async def test_commands_are_answered_in_private_chats_and_groups(stack: Stack, fake: FakeTelegram, repo: Path) -> None:
    await stack.register(repo)
    for text, chat in [("/help@isolator", PRIVATE), ("/status", PRIVATE), ("/status@isolator", GROUP)]:
        assert (await resolution(stack, await send(stack, message=message(text, chat)))).outcome == "command"
    help_text, private_status, group_status = fake.sent
    assert help_text.text.startswith("Commands:") and help_text.chat_id == PRIVATE["id"]
    assert "Codebase: project" in private_status.text and private_status.chat_id == PRIVATE["id"]
    assert "Codebase: project" in group_status.text and group_status.chat_id == GROUP["id"]


async def test_a_reply_to_the_bot_in_a_group_is_answered(stack: Stack, fake: FakeTelegram, repo: Path) -> None:
    await stack.register(repo)
    bots_message = {"message_id": 7, "from": BOT_USER, "chat": GROUP, "date": int(time.time()), "text": "Working in…"}
    update_id = await send(stack, message=message("now the tests", GROUP, reply_to_message=bots_message))
    answer = await resolution(stack, update_id)
    assert answer.outcome == "created"
    assert [(sent.chat_id, sent.text) for sent in fake.sent] == [
        (GROUP["id"], text) for text in first_replies(answer.branch, repo)
    ]


def test_a_leading_mention_is_stripped_and_ids_are_per_chat_and_topic() -> None:
    update = parse_update({"update_id": 5, "message": message("@Isolator: /status please", GROUP)})
    read = read_message(update, "isolator")
    assert not isinstance(read, str)
    assert (read.text, read.conversation_id, read.message_key) == ("/status please", f"{GROUP['id']}:0", "5")
    # a reply chain in an ordinary group carries a message_thread_id, but it is no forum topic
    chain = read_message(parse_update({"update_id": 6, "message": message("@isolator go", GROUP, message_thread_id=3)}),
                         "isolator")
    assert not isinstance(chain, str)
    assert (chain.text, chain.conversation_id) == ("go", f"{GROUP['id']}:0")
    # `@isolatorbot` is another bot, not a mention of this one
    other = read_message(parse_update({"update_id": 7, "message": message("@isolatorbot go", GROUP)}), "isolator")
    assert isinstance(other, str)


# --- the deliverer -------------------------------------------------------------------------------


async def test_the_deliverer_refuses_for_good_what_retrying_cannot_fix(settings: Settings, fake: FakeTelegram) -> None:
    deliver = make_deliverer(settings)
    fake.fail(400, "Bad Request: chat not found")
    fake.fail(403, "Forbidden: bot was blocked by the user")
    for expected in ["chat not found", "bot was blocked"]:
        with pytest.raises(ApplicationError) as refused:
            await deliver(reply())
        assert refused.value.non_retryable and expected in refused.value.message.lower()

    wrong_token = make_deliverer(settings.model_copy(update={"telegram_bot_token": SecretStr("1:wrong")}))
    with pytest.raises(ApplicationError) as unauthorized:
        await wrong_token(reply())
    assert unauthorized.value.non_retryable and "TELEGRAM_BOT_TOKEN" in unauthorized.value.message
    assert "1:wrong" not in unauthorized.value.message and unauthorized.value.__cause__ is None

    unset = make_deliverer(settings.model_copy(update={"telegram_bot_token": None}))
    with pytest.raises(ApplicationError) as not_configured:
        await unset(reply())
    assert not_configured.value.non_retryable and "TELEGRAM_BOT_TOKEN is not set" in not_configured.value.message
    assert fake.sent == []


async def test_the_deliverer_retries_rate_limits_and_outages(settings: Settings, fake: FakeTelegram) -> None:
    deliver = make_deliverer(settings)
    fake.fail(429, "Too Many Requests: retry after 3", retry_after=3)
    fake.fail(502, "Bad Gateway")
    with pytest.raises(ApplicationError) as limited:
        await deliver(reply())
    assert not limited.value.non_retryable and limited.value.next_retry_delay == timedelta(seconds=3)
    with pytest.raises(ApplicationError) as outage:
        await deliver(reply())
    assert not outage.value.non_retryable

    await deliver(reply(f"{FORUM['id']}:42"))
    assert fake.sent == [Sent(FORUM["id"], 42, "hello")]
