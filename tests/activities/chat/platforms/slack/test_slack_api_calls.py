"""The Slack pieces on their own: the deliverer through the real slack-sdk against the fake Slack Web
API, and reading events (mentions stripped, one conversation per thread)."""

from __future__ import annotations

import pytest
from temporalio.exceptions import ApplicationError

from activities.chat.platforms.slack import make_deliverer
from api.platforms.slack.events import parse_message
from isolator.contracts.message import ReplyInput
from isolator.settings import Settings
from tests.fakes.slack_api import BOT_USER_ID, FakeSlack
from tests.platforms.slack import CHANNEL, app_mention, message

# --- the deliverer -------------------------------------------------------------------------------


REPLY = ReplyInput("slack", f"{CHANNEL}:1700000000.000100", "hello", idempotency_key="reply-1")


async def test_the_deliverer_posts_into_the_thread(settings: Settings, fake: FakeSlack) -> None:
    await make_deliverer(settings)(REPLY)
    (post,) = fake.posts
    assert (post.channel, post.thread_ts, post.text) == (CHANNEL, "1700000000.000100", "hello")


@pytest.mark.parametrize(
    ("status", "error", "retryable"),
    [
        (200, "channel_not_found", False),
        (200, "not_in_channel", False),
        (200, "invalid_auth", False),
        (429, "ratelimited", True),
        (200, "internal_error", True),
        (503, "service_unavailable", True),
    ],
)
async def test_the_deliverer_retries_only_what_waiting_can_fix(
    settings: Settings, fake: FakeSlack, status: int, error: str, retryable: bool
) -> None:
    fake.fail("chat.postMessage", error, status=status)
    with pytest.raises(ApplicationError, match=error) as raised:
        await make_deliverer(settings)(REPLY)
    assert raised.value.non_retryable is not retryable
    assert fake.posts == []


async def test_the_deliverer_without_a_bot_token_says_so(settings: Settings) -> None:
    with pytest.raises(ApplicationError, match="SLACK_BOT_TOKEN") as raised:
        await make_deliverer(settings.model_copy(update={"slack_bot_token": None}))(REPLY)
    assert raised.value.non_retryable


# --- reading events ------------------------------------------------------------------------------


def test_mentions_of_the_bot_are_stripped_and_ids_are_per_thread() -> None:
    mention = app_mention("1.000002", f"<@{BOT_USER_ID}|isolator> /status", thread_ts="1.000001")
    parsed = parse_message(mention, BOT_USER_ID)
    assert parsed is not None
    assert (parsed.text, parsed.conversation_id, parsed.message_key) == (
        "/status", f"{CHANNEL}:1.000001", f"{CHANNEL}:1.000002"
    )
    other = parse_message(message("1.000003", f"ask <@U0SOMEONE1> and <@{BOT_USER_ID}>"), BOT_USER_ID)
    assert other is not None and other.text == "ask <@U0SOMEONE1> and"
    assert parse_message(message("1.000004", "x", subtype="thread_broadcast", thread_ts="1.000001"), BOT_USER_ID)
    assert parse_message(message("not-a-ts", "x"), BOT_USER_ID) is None
    assert parse_message({**message("1.000005", "x"), "channel": "C1:2"}, BOT_USER_ID) is None
