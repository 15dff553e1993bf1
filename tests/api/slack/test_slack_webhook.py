"""Slack end to end: signed Events API requests into the real app, workflows on real Temporal, git
and PostgreSQL, and replies through the real slack-sdk to a fake Slack Web API."""

from __future__ import annotations

import json
import time
from pathlib import Path

import asyncpg
import httpx
import pytest
from temporalio.client import Client

from api.app import create_app
from isolator.settings import ConfigurationError, Settings
from tests.conftest import Stack
from tests.fakes.slack_api import BOT_ID, BOT_USER_ID, FakeSlack
from tests.gitrepos import first_replies, worktree_paths
from tests.platforms.slack import (
    CHANNEL,
    USER,
    app_mention,
    event_callback,
    message,
    new_ts,
    post_signed,
    resolution,
    send,
    signed,
    started,
)
from workflows.naming import thread_branch

# --- requests shaped like Slack's documented examples --------------------------------------------


# --- the flow ------------------------------------------------------------------------------------


async def test_a_mention_creates_a_worktree_replies_in_the_thread_and_the_thread_reuses_it(
    stack: Stack, fake: FakeSlack, repo: Path
) -> None:
    await stack.register(repo)
    ts = new_ts()
    conversation = f"{CHANNEL}:{ts}"
    branch = thread_branch(f"slack:{conversation}")

    began = time.monotonic()
    await send(stack, app_mention(ts, f"<@{BOT_USER_ID}> fix the login bug"))
    assert time.monotonic() - began < 3, "Slack wants its answer within 3 s"

    assert await started(stack, ts), "the workflow is started before Slack gets its answer"
    result = await resolution(stack, ts)
    assert (result.outcome, result.branch) == ("created", branch)
    path = stack.settings.worktree_base.resolve() / "project" / branch
    assert result.working_path == str(path) and (path / "file0.txt").is_file()
    assert worktree_paths(repo) == [result.working_path]
    rows = await stack.db.fetch(
        "SELECT workflow_type, workflow_id, branch_name FROM isolation_environments WHERE status = 'active'"
    )
    assert [tuple(row) for row in rows] == [("thread", f"slack:{conversation}", branch)]
    # No agent is configured: the first message is told so at once, in the thread, after the worktree's line.
    assert [(post.channel, post.thread_ts, post.text) for post in fake.posts] == [
        (CHANNEL, ts, text) for text in first_replies(branch, repo)
    ]
    assert fake.calls("auth.test") == 1

    # A reply in the thread, without a mention: the bot is in this thread, so it is taken, silently.
    later = new_ts()
    await send(stack, message(later, "and the logout bug too", thread_ts=ts))
    reused = await resolution(stack, later)
    assert (reused.outcome, reused.working_path) == ("reused", result.working_path)
    assert len(fake.posts) == 2, "reuse is silent: that no agent answers was said once, on the first message"
    assert fake.calls("auth.test") == 1, "bolt asks for the bot's identity once"


async def test_status_in_the_thread_after_a_mention(stack: Stack, fake: FakeSlack, repo: Path) -> None:
    await stack.register(repo)
    ts = new_ts()
    await send(stack, app_mention(ts, f"<@{BOT_USER_ID}> fix the login bug"))
    created = await resolution(stack, ts)

    asked = new_ts()
    await send(stack, app_mention(asked, f"<@{BOT_USER_ID}> /status", thread_ts=ts))
    assert (await resolution(stack, asked)).outcome == "command"
    status = fake.posts[-1]
    assert (status.channel, status.thread_ts) == (CHANNEL, ts)
    assert "Codebase: project" in status.text and str(created.working_path) in status.text


async def test_url_verification_is_answered_with_the_challenge(stack: Stack) -> None:
    challenge = "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"
    payload = {"token": "Jhj5dZrVaK7ZwHHjRyZWjbDl", "challenge": challenge, "type": "url_verification"}
    response = await post_signed(stack, payload)
    assert (response.status_code, response.json()) == (200, {"challenge": challenge})


# --- refusals ------------------------------------------------------------------------------------


async def test_unsigned_badly_signed_stale_and_oversized_requests_start_nothing(
    stack: Stack, fake: FakeSlack, repo: Path
) -> None:
    await stack.register(repo)
    ts = new_ts()
    body = json.dumps(event_callback(app_mention(ts, f"<@{BOT_USER_ID}> do it"))).encode()
    good = signed(body)
    attempts = {
        "unsigned": {"content-type": "application/json"},
        "signed with another secret": signed(body, secret="not-the-secret"),
        "stale": signed(body, timestamp=int(time.time()) - 301),
        "timestamp not a number": {**good, "x-slack-request-timestamp": "yesterday"},
        "signature of another body": signed(body + b" "),
    }
    for name, headers in attempts.items():
        response = await stack.api.post("/webhooks/slack", content=body, headers=headers)
        assert response.status_code == 401, name
        assert "signature" in response.json()["detail"], name

    challenge = json.dumps({"type": "url_verification", "challenge": "x"}).encode()
    response = await stack.api.post("/webhooks/slack", content=challenge, headers=signed(challenge, secret="wrong"))
    assert response.status_code == 401

    not_json = b"event=app_mention"
    response = await stack.api.post("/webhooks/slack", content=not_json, headers=signed(not_json))
    assert response.status_code == 400
    not_utf8 = b"\xff\xfe{}"
    response = await stack.api.post("/webhooks/slack", content=not_utf8, headers=signed(b"{}"))
    assert response.status_code == 400

    huge_ts = new_ts()
    huge = json.dumps(event_callback(app_mention(huge_ts, f"<@{BOT_USER_ID}> " + "x" * (1024 * 1024)))).encode()
    response = await stack.api.post("/webhooks/slack", content=huge, headers=signed(huge))
    assert response.status_code == 413

    assert not await started(stack, ts) and not await started(stack, huge_ts)
    assert await stack.db.fetchval("SELECT count(*) FROM conversations") == 0
    assert fake.server.requests == [], "nothing reached Slack, not even auth.test"


async def test_the_same_message_as_mention_message_and_retry_is_answered_once(
    stack: Stack, fake: FakeSlack, repo: Path
) -> None:
    await stack.register(repo)
    ts = new_ts()
    text = f"<@{BOT_USER_ID}> start here"
    # Slack sends a mention twice (app_mention, then message) and retries when an answer is slow.
    for event, headers in [
        (app_mention(ts, text), {}),
        (message(ts, text), {}),
        (app_mention(ts, text), {"x-slack-retry-num": "1", "x-slack-retry-reason": "http_timeout"}),
    ]:
        await send(stack, event, **headers)
        assert (await resolution(stack, ts)).outcome == "created"
    assert [post.text for post in fake.posts] == first_replies(thread_branch(f"slack:{CHANNEL}:{ts}"), repo)

    # Inside the thread too: a command mentioning the bot arrives as both events; one answer.
    asked = new_ts()
    status = f"<@{BOT_USER_ID}> /status"
    for event in [message(asked, status, thread_ts=ts), app_mention(asked, status, thread_ts=ts)]:
        await send(stack, event)
        assert (await resolution(stack, asked)).outcome == "command"
    assert len(fake.posts) == 3
    assert "Codebase: project" in fake.posts[2].text


async def test_the_bots_own_messages_and_threads_it_is_not_in_are_ignored(
    stack: Stack, fake: FakeSlack, repo: Path
) -> None:
    await stack.register(repo)
    ts = new_ts()
    await send(stack, app_mention(ts, f"<@{BOT_USER_ID}> fix the login bug"))
    await resolution(stack, ts)

    own, bot_post, edited, elsewhere, top_level = (new_ts() for _ in range(5))
    ignored = [
        # what Slack sends back for the bot's own reply in the thread
        message(own, "Working in isolated branch `x`", thread_ts=ts, user=BOT_USER_ID, bot_id=BOT_ID),
        # another bot's message in the thread
        message(bot_post, "beep", thread_ts=ts, subtype="bot_message", bot_id="B0OTHER001", user=None),
        # an edit of a message in the thread
        message(edited, "", thread_ts=ts, subtype="message_changed", hidden=True,
                message={"type": "message", "user": USER, "text": "edited", "ts": ts}),
        # a thread the bot never joined, and a plain channel message
        message(elsewhere, "chatting", thread_ts=new_ts()),
        message(top_level, "hello channel"),
    ]
    for event in ignored:
        await send(stack, event)
    for ignored_ts in (own, bot_post, edited, elsewhere, top_level):
        assert not await started(stack, ignored_ts)
    assert await stack.db.fetchval("SELECT count(*) FROM conversations") == 1
    assert [post.text for post in fake.posts] == first_replies(thread_branch(f"slack:{CHANNEL}:{ts}"), repo)


async def test_when_temporal_refuses_the_event_is_not_acknowledged(
    settings: Settings, fake: FakeSlack, db: asyncpg.Pool, temporal: Client
) -> None:
    """Slack delivers an unacknowledged event again later; a 200 would lose it."""
    refusing = await Client.connect(temporal.service_client.config.target_host, namespace="no-such-namespace")
    app = create_app(settings, temporal=refusing, pool=db)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://isolator.test") as api:
        body = json.dumps(event_callback(app_mention(new_ts(), f"<@{BOT_USER_ID}> hi"))).encode()
        response = await api.post("/webhooks/slack", content=body, headers=signed(body))
    assert response.status_code == 503


def test_a_signing_secret_without_a_bot_token_fails_at_start(settings: Settings) -> None:
    with pytest.raises(ConfigurationError, match="SLACK_BOT_TOKEN"):
        create_app(settings.model_copy(update={"slack_bot_token": None}))
