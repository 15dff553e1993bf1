"""The agent's answer as it is written, on every platform through its own client library against
its fake API: the first output posted at once, then one message updated in place (Slack
`chat.update`, Telegram `editMessageText`, an edited GitHub comment, an edited Discord message, the
latest text in the test adapter), continued in a new message past the platform's length limit, and a closing summary."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import AsyncIterator

import pytest
from pydantic import SecretStr

from activities.runs.answer import PLATFORM_LIMITS
from api.dispatch import start_message
from isolator.settings import Settings
from tests.agent_runs import finished_run, replies_when
from tests.agents import command
from tests.conftest import Stack
from tests.fakes.discord_api import BOT_TOKEN as DISCORD_TOKEN
from tests.fakes.discord_api import FakeDiscord
from tests.fakes.github_api import TOKEN as GITHUB_TOKEN
from tests.fakes.github_api import FakeGitHub
from tests.fakes.slack_api import BOT_TOKEN as SLACK_TOKEN
from tests.fakes.slack_api import FakeSlack
from tests.fakes.telegram_api import BOT_TOKEN as TELEGRAM_TOKEN
from tests.fakes.telegram_api import FakeTelegram

LONG = 6000  # characters: two messages on Slack and Telegram, four on Discord, one on GitHub
Fakes = tuple[FakeGitHub, FakeSlack, FakeTelegram, FakeDiscord]


@pytest.fixture
async def fakes() -> AsyncIterator[Fakes]:
    all_fakes = FakeGitHub(), FakeSlack(), FakeTelegram(), FakeDiscord()
    for fake in all_fakes:
        await fake.start()
    yield all_fakes
    for fake in all_fakes:
        await fake.stop()


@pytest.fixture
def settings(settings: Settings, fakes: Fakes) -> Settings:
    github, slack, telegram, discord = fakes
    return settings.model_copy(update={
        "agent_command_line": command("streamer", str(LONG)),
        "github_token": SecretStr(GITHUB_TOKEN), "github_api_url": github.api_url,
        "slack_bot_token": SecretStr(SLACK_TOKEN), "slack_api_url": slack.api_url,
        "telegram_bot_token": SecretStr(TELEGRAM_TOKEN), "telegram_api_url": telegram.api_url,
        "discord_bot_token": SecretStr(DISCORD_TOKEN), "discord_api_url": discord.api_url,
    })


async def test_the_answer_streams_to_every_platform_updated_in_place(
    stack: Stack, repo: Path, fakes: Fakes
) -> None:
    github, slack, telegram, discord = fakes
    await stack.register(repo)
    github.add_issue("octo/hello", 7)
    discord.add_thread("1300000000000000077")
    conversations = {"github": "octo/hello#7", "slack": "C0STREAM:1700000000.000001", "telegram": "4242:0",
                     "discord": "1300000000000000077"}
    handles = [await start_message(stack.settings, stack.temporal, platform=platform, conversation_id=conversation,
                                   text="@isolator stream please", message_key=uuid.uuid4().hex)
               for platform, conversation in conversations.items()]
    handles.append(await start_message(stack.settings, stack.temporal, platform="test", conversation_id="stream-1",
                                       text="stream please", message_key=uuid.uuid4().hex))
    runs = [(await handle.result()).run_id for handle in handles]
    assert all(runs)

    # While the runs are going, the first output is already there.
    await _until(lambda: any("first line" in post.text for post in slack.posts)
                 and any("first line" in sent.text for sent in telegram.sent)
                 and any("first line" in comment.body for comment in github.comments)
                 and any("first line" in sent.content for sent in discord.sent))
    for run in runs:
        assert (await finished_run(stack, run))["status"] == "done"

    # Slack: the answer, grown in place, then continued past the limit; the summary closes it.
    answers = [post for post in slack.posts if post.channel == "C0STREAM" and "first line" in post.text]
    assert len(answers) == 1 and answers[0].text.startswith("first line")
    assert answers[0].thread_ts == "1700000000.000001"
    assert any(text.startswith("first line\nsecond line") for _, _, text in slack.updates)
    continued = [post for post in slack.posts if post.text.startswith("y" * 99)]
    assert continued, "the answer went on in a new message"
    final_texts = [text for _, _, text in slack.updates if "— Done in" in text]
    assert final_texts and final_texts[-1].rstrip().splitlines()[-1].startswith("— Done in")
    assert all(len(text) <= PLATFORM_LIMITS["slack"] for text in [*(p.text for p in slack.posts),
                                                                  *(t for _, _, t in slack.updates)])

    # Telegram: sendMessage, then editMessageText of that message.
    first = next(number for number, sent in enumerate(telegram.sent, start=1) if sent.text.startswith("first line"))
    edits = [text for _, message_id, text in telegram.edits if message_id == first]  # the fake numbers from 1
    assert any(text.startswith("first line\nsecond line") for text in edits)
    assert any("— Done in" in text for _, _, text in telegram.edits)
    assert all(len(text) <= PLATFORM_LIMITS["telegram"] for _, _, text in telegram.edits)

    # Discord: a message in the thread, edited in place, then more messages within 2,000 characters.
    (answer,) = [sent for sent in discord.sent if sent.content.startswith("first line")]
    assert answer.channel_id == "1300000000000000077"
    assert any(edit.message_id == answer.message_id and edit.content.startswith("first line\nsecond line")
               for edit in discord.edits)
    assert any(sent.content.startswith("y" * 99) for sent in discord.sent), "the answer went on in a new message"
    assert any("— Done in" in edit.content for edit in discord.edits)
    assert all(len(text) <= PLATFORM_LIMITS["discord"]
               for text in [*(sent.content for sent in discord.sent), *(edit.content for edit in discord.edits)])

    # GitHub: one comment holds the whole answer, edited; its last text ends with the summary.
    answer_comments = [comment for comment in github.comments if comment.body.startswith("first line")]
    assert len(answer_comments) == 1
    assert github.edits and "the end" in github.edits[-1][1] and "— Done in" in github.edits[-1][1]

    # The test adapter: the latest text of each message.
    replies = await replies_when(stack, "stream-1", lambda texts: any("— Done in" in text for text in texts))
    assert replies[1].startswith("first line\nsecond line\n")
    assert replies[-1].rstrip().splitlines()[-1].startswith("— Done in")


async def _until(condition, seconds: float = 20) -> None:  # type: ignore[no-untyped-def]
    for _ in range(int(seconds * 20)):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the first output did not arrive")
