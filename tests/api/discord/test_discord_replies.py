"""Replies to Discord through discord.py's REST client, against the fake: split at 2,000 characters,
sent once when retried, follow-ups while the interaction's token lasts, errors told apart."""

from __future__ import annotations

import asyncpg
import pytest
from pydantic import SecretStr
from temporalio.exceptions import ApplicationError

from activities.chat.platforms.discord import make_deliverer
from isolator.contracts.message import ReplyInput
from isolator.settings import Settings
from tests.fakes.discord_api import APPLICATION_ID, CHANNEL_ID, FakeDiscord


def reply(text: str = "hello", key: str = "k", answers: str | None = None) -> ReplyInput:
    return ReplyInput(platform="discord", conversation_id=CHANNEL_ID, text=text, idempotency_key=key, answers=answers)


async def test_a_long_reply_is_split_and_a_retried_one_is_not_posted_twice(
    settings: Settings, fake: FakeDiscord, db: asyncpg.Pool
) -> None:
    deliver = make_deliverer(settings, db)
    text = "\n".join(f"line {number:04}" for number in range(500))  # 10 characters a line
    first_id = await deliver(reply(text, key="long"))
    assert [len(sent.content) for sent in fake.sent] == [2000, 2000, 999]  # cut after a line
    assert "".join(sent.content for sent in fake.sent) == text and first_id == fake.sent[0].message_id

    # The activity retried after Discord took the message but before the outbound log said so.
    assert await deliver(reply(text, key="long")) == first_id
    assert len(fake.sent) == 3

    assert await deliver(reply("grown", key="edit"), first_id) == first_id
    assert [(edit.message_id, edit.content) for edit in fake.edits] == [(first_id, "grown")]


async def test_a_slash_commands_replies_are_its_follow_ups_while_its_token_lasts(
    settings: Settings, fake: FakeDiscord, db: asyncpg.Pool
) -> None:
    deliver = make_deliverer(settings, db)
    await db.execute("INSERT INTO discord_interactions (interaction_id, application_id, token) VALUES ($1, $2, $3)",
                     "77", APPLICATION_ID, "fresh-token")
    await db.execute("""INSERT INTO discord_interactions (interaction_id, application_id, token, received_at)
                        VALUES ($1, $2, $3, now() - interval '20 minutes')""", "78", APPLICATION_ID, "old-token")
    fake.expect_interaction("fresh-token")
    fake.expect_interaction("old-token")

    follow_up = await deliver(reply("Working in `thread-1`", key="a", answers="interaction:77"))
    assert [(f.token, f.content) for f in fake.followups] == [("fresh-token", "Working in `thread-1`")]
    assert follow_up == f"follow-up:77:{fake.followups[0].message_id}"
    await deliver(reply("updated", key="b"), follow_up)
    assert [(f.token, f.message_id, f.content) for f in fake.followup_edits] == [
        ("fresh-token", fake.followups[0].message_id, "updated")]

    await deliver(reply("late answer", key="c", answers="interaction:78"))
    assert len(fake.followups) == 1 and [sent.content for sent in fake.sent] == ["late answer"], \
        "past the token's 15 minutes the answer goes to the channel"


async def test_the_deliverer_refuses_for_good_what_retrying_cannot_fix(
    settings: Settings, fake: FakeDiscord, db: asyncpg.Pool
) -> None:
    deliver = make_deliverer(settings, db)
    fake.fail(403, 50001, "Missing Access")
    with pytest.raises(ApplicationError) as refused:
        await deliver(reply())
    assert refused.value.non_retryable and "give the bot access to the channel" in refused.value.message

    fake.fail(503, 0, "503: Service Unavailable")  # (500, 502 and 504 discord.py first retries itself, for 25 s)
    with pytest.raises(ApplicationError) as unavailable:
        await deliver(reply(key="later"))
    assert not unavailable.value.non_retryable and unavailable.value.type == "DiscordUnavailable"

    unknown = make_deliverer(settings.model_copy(update={"discord_bot_token": None}), db)
    with pytest.raises(ApplicationError, match="DISCORD_BOT_TOKEN is not set"):
        await unknown(reply())
    wrong_token = make_deliverer(settings.model_copy(update={"discord_bot_token": SecretStr("MTIz.wrong.token")}), db)
    with pytest.raises(ApplicationError) as unauthorized:
        await wrong_token(reply())
    assert unauthorized.value.non_retryable and "DISCORD_BOT_TOKEN" in unauthorized.value.message
    assert "MTIz.wrong.token" not in unauthorized.value.message and unauthorized.value.__cause__ is None
    with pytest.raises(ApplicationError, match="not a Discord conversation id"):
        await deliver(ReplyInput("discord", "C123:456", "hi", "bad"))
