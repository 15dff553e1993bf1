"""A message updated in place (set-up progress), through each platform's own client library against
its fake API: Slack `chat.update`, Telegram `editMessageText`, an edited GitHub comment; and the
outbound log, which the test adapter reads, holds the latest text."""

from __future__ import annotations

import uuid

import asyncpg
from pydantic import SecretStr

from activities.chat.platforms import deliverers
from activities.chat.replies import ReplyActivities
from isolator.contracts.message import ReplyInput
from isolator.settings import Settings
from tests.fakes.github_api import TOKEN as GITHUB_TOKEN
from tests.fakes.github_api import FakeGitHub
from tests.fakes.slack_api import BOT_TOKEN as SLACK_TOKEN
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import BOT_TOKEN as TELEGRAM_TOKEN
from tests.fakes.telegram_api import FakeTelegram


async def test_each_platform_updates_one_message_in_place(settings: Settings, db: asyncpg.Pool) -> None:
    github, slack, telegram = FakeGitHub(), FakeSlack(), FakeTelegram()
    for fake in (github, slack, telegram):
        await fake.start()
    try:
        configured = settings.model_copy(update={
            "github_token": SecretStr(GITHUB_TOKEN), "github_api_url": github.api_url,
            "slack_bot_token": SecretStr(SLACK_TOKEN), "slack_api_url": slack.api_url,
            "telegram_bot_token": SecretStr(TELEGRAM_TOKEN), "telegram_api_url": telegram.api_url,
        })
        replies = ReplyActivities(db, deliverers(configured, db))
        unique = uuid.uuid4().int % 10**6
        conversations = {"github": f"octo/hello-{unique}#7", "slack": f"C{unique}:1700000000.000001",
                         "telegram": f"{unique}:0", "test": f"updates-{unique}"}
        github.add_issue(f"octo/hello-{unique}", 7)
        for platform, conversation in conversations.items():
            key = f"progress-{platform}-{uuid.uuid4().hex}"
            await replies.deliver_once(ReplyInput(platform, conversation, "Setting up: 5 s…", key))
            await replies.deliver_once(ReplyInput(platform, conversation, "Setting up: 8 s…", f"{key}:1", updates=key))
            await replies.deliver_once(ReplyInput(platform, conversation, "Ready in 9 s", f"{key}:2", updates=key))
            logged = await db.fetch("SELECT body FROM outbound_messages WHERE platform_conversation_id = $1",
                                    conversation)
            assert [row["body"] for row in logged] == ["Ready in 9 s"], platform

        assert [comment.body for comment in github.comments] == ["Setting up: 5 s…"]
        assert [body for _, body in github.edits] == ["Setting up: 8 s…", "Ready in 9 s"]
        assert [post.text for post in slack.posts] == ["Setting up: 5 s…"]
        assert [(channel, text) for channel, _, text in slack.updates] == [(f"C{unique}", "Setting up: 8 s…"),
                                                                            (f"C{unique}", "Ready in 9 s")]
        assert [sent.text for sent in telegram.sent] == ["Setting up: 5 s…"]
        assert [(chat, text) for chat, _, text in telegram.edits] == [(unique, "Setting up: 8 s…"),
                                                                      (unique, "Ready in 9 s")]
    finally:
        for fake in (github, slack, telegram):
            await fake.stop()
