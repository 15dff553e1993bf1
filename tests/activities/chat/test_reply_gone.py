"""A message updated in place that no longer exists (deleted by someone: the platform answers 404 or
its equivalent): the text goes out as a new message at once, and the next updates edit that one. Each
platform through its own client library against its fake API. The end of an agent's answer is tried
again only while the platform is away, never when it refuses."""

from __future__ import annotations

import uuid
from typing import AsyncIterator

import asyncpg
import pytest
from pydantic import SecretStr

from activities.chat.platforms import deliverers
from activities.chat.replies import ReplyActivities
from activities.runs.answer import AnswerStream
from isolator.contracts.message import ReplyInput
from isolator.settings import Settings
from tests.fakes.discord_api import APPLICATION_ID, CHANNEL_ID, FakeDiscord
from tests.fakes.discord_api import BOT_TOKEN as DISCORD_TOKEN
from tests.fakes.github_api import TOKEN as GITHUB_TOKEN
from tests.fakes.github_api import FakeGitHub
from tests.fakes.slack_api import BOT_TOKEN as SLACK_TOKEN
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import BOT_TOKEN as TELEGRAM_TOKEN
from tests.fakes.telegram_api import FakeTelegram


class Fakes:
    def __init__(self) -> None:
        self.github, self.slack, self.telegram, self.discord = FakeGitHub(), FakeSlack(), FakeTelegram(), FakeDiscord()

    def all(self) -> tuple[FakeGitHub, FakeSlack, FakeTelegram, FakeDiscord]:
        return self.github, self.slack, self.telegram, self.discord


@pytest.fixture
async def fakes() -> AsyncIterator[Fakes]:
    fakes = Fakes()
    for fake in fakes.all():
        await fake.start()
    yield fakes
    for fake in fakes.all():
        await fake.stop()


@pytest.fixture
def replies(settings: Settings, db: asyncpg.Pool, fakes: Fakes) -> ReplyActivities:
    configured = settings.model_copy(update={
        "github_token": SecretStr(GITHUB_TOKEN), "github_api_url": fakes.github.api_url,
        "slack_bot_token": SecretStr(SLACK_TOKEN), "slack_api_url": fakes.slack.api_url,
        "telegram_bot_token": SecretStr(TELEGRAM_TOKEN), "telegram_api_url": fakes.telegram.api_url,
        "discord_bot_token": SecretStr(DISCORD_TOKEN), "discord_api_url": fakes.discord.api_url,
    })
    return ReplyActivities(db, deliverers(configured, db))


async def message_id_of(db: asyncpg.Pool, key: str) -> str:
    return await db.fetchval("SELECT platform_message_id FROM outbound_messages WHERE idempotency_key = $1", key)


async def posted_then_deleted_then_updated_twice(
    replies: ReplyActivities, db: asyncpg.Pool, platform: str, conversation: str, delete
) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    """The first message's id and the new one's: posted, deleted by someone, updated, updated again."""
    key = f"answer-{platform}-{uuid.uuid4().hex}"
    await replies.deliver_once(ReplyInput(platform, conversation, "working on it", key))
    first = await message_id_of(db, key)
    delete(first)
    await replies.deliver_once(ReplyInput(platform, conversation, "working on it\nhalf", f"{key}:1", updates=key))
    second = await message_id_of(db, key)
    assert second not in (None, first), platform
    await replies.deliver_once(ReplyInput(platform, conversation, "working on it\ndone", f"{key}:2", updates=key))
    assert await message_id_of(db, key) == second, f"{platform}: the next update edits the new message"
    body = await db.fetchval("SELECT body FROM outbound_messages WHERE idempotency_key = $1", key)
    assert body == "working on it\ndone"
    return first, second


async def test_github_posts_a_new_comment_when_the_answer_was_deleted(
    replies: ReplyActivities, db: asyncpg.Pool, fakes: Fakes
) -> None:
    repository = f"octo/gone-{uuid.uuid4().hex[:6]}"
    fakes.github.add_issue(repository, 7)
    first, second = await posted_then_deleted_then_updated_twice(
        replies, db, "github", f"{repository}#7", lambda comment: fakes.github.delete_comment(int(comment)))
    assert [comment.body for comment in fakes.github.comments] == ["working on it", "working on it\nhalf"]
    assert fakes.github.edits == [(int(second), "working on it\ndone")]


async def test_slack_posts_a_new_message_when_the_answer_was_deleted(
    replies: ReplyActivities, db: asyncpg.Pool, fakes: Fakes
) -> None:
    first, second = await posted_then_deleted_then_updated_twice(
        replies, db, "slack", "C0GONE:1700000000.000001", fakes.slack.delete)
    assert [post.text for post in fakes.slack.posts] == ["working on it", "working on it\nhalf"]
    assert all(post.thread_ts == "1700000000.000001" for post in fakes.slack.posts), "in the conversation's thread"
    assert fakes.slack.updates == [("C0GONE", second, "working on it\ndone")]


async def test_telegram_sends_a_new_message_when_the_answer_was_deleted(
    replies: ReplyActivities, db: asyncpg.Pool, fakes: Fakes
) -> None:
    first, second = await posted_then_deleted_then_updated_twice(
        replies, db, "telegram", "4242:0", lambda message: fakes.telegram.delete(int(message)))
    assert [sent.text for sent in fakes.telegram.sent] == ["working on it", "working on it\nhalf"]
    assert fakes.telegram.edits[-1] == (4242, int(second), "working on it\ndone")


async def test_discord_sends_a_new_message_when_the_answer_was_deleted(
    replies: ReplyActivities, db: asyncpg.Pool, fakes: Fakes
) -> None:
    first, second = await posted_then_deleted_then_updated_twice(
        replies, db, "discord", CHANNEL_ID, fakes.discord.delete_message)
    assert [sent.content for sent in fakes.discord.sent] == ["working on it", "working on it\nhalf"]
    assert [(edit.message_id, edit.content) for edit in fakes.discord.edits] == [(second, "working on it\ndone")]


async def test_discord_answers_past_the_interactions_token_in_one_channel_message(
    replies: ReplyActivities, db: asyncpg.Pool, fakes: Fakes
) -> None:
    """A slash command's answer is its follow-up; once the token has expired, the next update becomes a
    channel message and the ones after edit it (not one new message per update)."""
    await db.execute("INSERT INTO discord_interactions (interaction_id, application_id, token) VALUES ($1, $2, $3)",
                     "91", APPLICATION_ID, "short-lived")
    fakes.discord.expect_interaction("short-lived")
    key = f"answer-discord-{uuid.uuid4().hex}"
    await replies.deliver_once(ReplyInput("discord", CHANNEL_ID, "working on it", key, answers="interaction:91"))
    assert len(fakes.discord.followups) == 1
    await db.execute("UPDATE discord_interactions SET received_at = now() - interval '20 minutes'")
    for number, text in enumerate(["working on it\nhalf", "working on it\nmore", "working on it\ndone"]):
        await replies.deliver_once(ReplyInput("discord", CHANNEL_ID, text, f"{key}:{number}", updates=key))
    assert [sent.content for sent in fakes.discord.sent] == ["working on it\nhalf"]
    assert [edit.content for edit in fakes.discord.edits] == ["working on it\nmore", "working on it\ndone"]


async def test_the_end_of_an_answer_is_not_retried_when_the_platform_refuses_it(
    replies: ReplyActivities, fakes: Fakes
) -> None:
    """Deleted, then the bot blocked: the end goes out once as a new message, is refused, and the run
    goes on to its end at once instead of trying for two minutes."""
    answer = AnswerStream(replies.deliver_once, "telegram", "5151:0", f"run-{uuid.uuid4().hex}")
    answer.add("working on it\n")
    await answer.flush()
    assert [sent.text for sent in fakes.telegram.sent] == ["working on it\n"]
    fakes.telegram.delete(1)
    fakes.telegram.fail(403, "Forbidden: bot was blocked by the user", times=10)
    await answer.finish("— Done in 2.0 s.", "")
    assert fakes.telegram.calls("sendMessage") == 2, "one first message, one refused new message, no retries"


async def test_the_end_of_an_answer_is_retried_while_the_platform_is_away(
    replies: ReplyActivities, fakes: Fakes
) -> None:
    answer = AnswerStream(replies.deliver_once, "telegram", "5252:0", f"run-{uuid.uuid4().hex}")
    fakes.telegram.fail(502, "Bad Gateway", times=1)
    await answer.finish("— Done in 2.0 s.", "")
    assert [sent.text for sent in fakes.telegram.sent] == ["— Done in 2.0 s."]
    assert fakes.telegram.calls("sendMessage") == 2
