"""Slack over Socket Mode end to end: the service's socket client (slack-bolt's handler on slack-sdk's
aiohttp client) against a fake Slack whose `apps.connections.open` gives a local ws:// URL served by a
real WebSocket server; workflows on real Temporal, git and PostgreSQL; replies through the real
slack-sdk to the fake Web API."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest
from pydantic import SecretStr
from temporalio.client import Client

from isolator.contracts.message import message_workflow_id
from isolator.settings import ConfigurationError, Settings, load_settings
from tests.conftest import Stack
from tests.fakes.slack_api import BOT_USER_ID, FakeSlack
from tests.fakes.slack_socket import FakeSlackSocket
from tests.gitrepos import first_replies
from tests.platforms.slack import CHANNEL, app_mention, event_callback, message, new_ts, resolution, started
from tests.platforms.slack_socket import slash_command, socket_client
from tests.visibility import found
from workflows.message import MessageWorkflow
from workflows.naming import thread_branch


async def until(condition, what: str, seconds: float = 60) -> None:  # type: ignore[no-untyped-def]
    for _ in range(int(seconds * 20)):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"not within {seconds} s: {what}")


def thread_posts(fake: FakeSlack, ts: str) -> list[str]:
    return [post.text for post in fake.posts if (post.channel, post.thread_ts) == (CHANNEL, ts)]


async def test_a_mention_over_the_socket_starts_its_work_then_is_acknowledged_and_answered(
    stack: Stack, fake: FakeSlack, slack_socket: FakeSlackSocket, socket_settings: Settings, repo: Path
) -> None:
    await stack.register(repo)
    async with socket_client(socket_settings, stack.temporal, stack.db):
        connection = await slack_socket.connection()
        ts = new_ts()
        envelope = await slack_socket.send("events_api", event_callback(app_mention(ts, f"<@{BOT_USER_ID}> fix it")))
        ack = await slack_socket.acked(envelope)
        assert await started(stack, ts), "acknowledged once its workflow has started"
        assert ack.at - slack_socket.sent_at[envelope] < 3, "Slack wants its acknowledgement within 3 s"
        assert (ack.connection, ack.payload) == (connection.number, None)
        assert (await resolution(stack, ts)).outcome == "created"

        later = new_ts()  # in the thread, without a mention: the bot is in it now
        reply = await slack_socket.send("events_api", event_callback(message(later, "and the tests", thread_ts=ts)))
        await slack_socket.acked(reply)
        assert (await resolution(stack, later)).outcome == "reused"
    branch = thread_branch(f"slack:{CHANNEL}:{ts}")
    assert thread_posts(fake, ts) == first_replies(branch, repo)
    assert slack_socket.urls_given == 1


async def test_an_acknowledgement_lost_with_its_socket_brings_the_envelope_again_and_it_starts_once(
    stack: Stack, fake: FakeSlack, slack_socket: FakeSlackSocket, socket_settings: Settings, repo: Path
) -> None:
    await stack.register(repo)
    async with socket_client(socket_settings, stack.temporal, stack.db):
        first = await slack_socket.connection()
        threads = [new_ts() for _ in range(3)]
        envelopes = [await slack_socket.send("events_api", event_callback(app_mention(ts, f"<@{BOT_USER_ID}> n{n}")))
                     for n, ts in enumerate(threads[:2])]
        await slack_socket.drop(first)  # mid-stream: whatever was not acknowledged yet comes again
        # The work of the first two started (or starts on the second try); the ack of either may be lost.
        second = await slack_socket.connection(number=first.number + 1)
        envelopes.append(await slack_socket.send("events_api", event_callback(
            app_mention(threads[2], f"<@{BOT_USER_ID}> n2")), to=second))
        for envelope in envelopes:
            await slack_socket.acked(envelope)
        outcomes = [await resolution(stack, ts) for ts in threads]
        assert [outcome.outcome for outcome in outcomes] == ["created"] * 3
        await until(lambda: all(len(thread_posts(fake, ts)) == 2 for ts in threads), "every thread answered")
        await asyncio.sleep(1)  # time for a second start's replies to show
    assert [thread_posts(fake, ts) for ts in threads] == [
        first_replies(thread_branch(f"slack:{CHANNEL}:{ts}"), repo) for ts in threads]
    assert slack_socket.urls_given >= 2, "a new URL for the new connection"


async def test_an_envelope_handled_but_not_acknowledged_is_taken_once_when_sent_again(
    stack: Stack, fake: FakeSlack, slack_socket: FakeSlackSocket, socket_settings: Settings, repo: Path
) -> None:
    """Its workflow started, its acknowledgement never reached Slack: Slack sends it again on the next
    connection (retry_attempt 1), and the second handling starts nothing."""
    await stack.register(repo)
    async with socket_client(socket_settings, stack.temporal, stack.db):
        first = await slack_socket.connection()
        ts = new_ts()
        envelope = await slack_socket.send("events_api", event_callback(app_mention(ts, f"<@{BOT_USER_ID}> fix")))
        await slack_socket.acked(envelope)
        slack_socket.acks.clear()  # as if it had been lost on the way
        await slack_socket.drop(first)
        second = await slack_socket.connection(number=first.number + 1)
        again = await slack_socket.acked(envelope)
        assert again.connection == second.number
        assert (await resolution(stack, ts)).outcome == "created"
        await until(lambda: len(thread_posts(fake, ts)) == 2, "the thread answered")
        await asyncio.sleep(1)
    assert thread_posts(fake, ts) == first_replies(thread_branch(f"slack:{CHANNEL}:{ts}"), repo)
    workflow_id = message_workflow_id("slack", f"{CHANNEL}:{ts}")
    assert await found(stack.temporal, f"WorkflowId = '{workflow_id}'", workflow_id)
    runs = [execution async for execution in stack.temporal.list_workflows(f"WorkflowId = '{workflow_id}'")]
    assert len(runs) == 1


async def test_two_processes_with_the_token_handle_an_envelope_sent_to_both_once(
    stack: Stack, fake: FakeSlack, slack_socket: FakeSlackSocket, socket_settings: Settings, repo: Path
) -> None:
    await stack.register(repo)
    async with (socket_client(socket_settings, stack.temporal, stack.db),
                socket_client(socket_settings, stack.temporal, stack.db)):
        one = await slack_socket.connection(number=1)
        two = await slack_socket.connection(number=2)
        threads = [new_ts() for _ in range(5)]
        for ts in threads:
            # Slack's second try of an envelope may go to the other connection while the first still works.
            envelope = await slack_socket.send("events_api", event_callback(app_mention(ts, f"<@{BOT_USER_ID}> go")),
                                               to=one)
            await slack_socket.resend(envelope, to=two)
        await until(lambda: all(len(slack_socket.acks_of(key)) == 2 for key in slack_socket.envelopes),
                    "both acknowledged every envelope")
        assert {ack.connection for ack in slack_socket.acks} == {1, 2}
        assert [(await resolution(stack, ts)).outcome for ts in threads] == ["created"] * 5
        await until(lambda: all(len(thread_posts(fake, ts)) == 2 for ts in threads), "every thread answered")
        await asyncio.sleep(1)
    assert [thread_posts(fake, ts) for ts in threads] == [
        first_replies(thread_branch(f"slack:{CHANNEL}:{ts}"), repo) for ts in threads]


async def test_a_slash_command_opens_a_thread_whose_reply_comes_there_once(
    stack: Stack, fake: FakeSlack, slack_socket: FakeSlackSocket, socket_settings: Settings
) -> None:
    async with socket_client(socket_settings, stack.temporal, stack.db):
        first = await slack_socket.connection()
        trigger = f"1000.{uuid.uuid4().hex}"
        envelope = await slack_socket.send("slash_commands", slash_command("status", trigger))
        ack = await slack_socket.acked(envelope)
        assert ack.payload is None, "nothing more to show: the thread is in the channel"
        (opening,) = [post for post in fake.posts if post.thread_ts is None]
        assert (opening.channel, opening.text) == (CHANNEL, "<@U0PERSON01> ran `/isolator status`")
        await until(lambda: len(thread_posts(fake, opening.ts)) == 1, "the status in the command's thread")
        assert thread_posts(fake, opening.ts) == ["Codebase: none (use `/clone`)\nWorktree: none"]
        workflow_id = message_workflow_id("slack", f"command:{trigger}")
        result = await stack.temporal.get_workflow_handle_for(MessageWorkflow.run, workflow_id).result()
        assert result.outcome == "command"

        slack_socket.acks.clear()  # its acknowledgement lost: Slack sends it again
        await slack_socket.drop(first)
        await slack_socket.acked(envelope)
        await asyncio.sleep(1)
    assert len([post for post in fake.posts if post.thread_ts is None]) == 1, "the thread is opened once"
    assert len(thread_posts(fake, opening.ts)) == 1


async def test_a_slash_command_sent_to_two_processes_opens_one_thread(
    stack: Stack, fake: FakeSlack, slack_socket: FakeSlackSocket, socket_settings: Settings
) -> None:
    async with (socket_client(socket_settings, stack.temporal, stack.db),
                socket_client(socket_settings, stack.temporal, stack.db)):
        one = await slack_socket.connection(number=1)
        two = await slack_socket.connection(number=2)
        triggers = [f"1000.{uuid.uuid4().hex}" for _ in range(3)]
        for trigger in triggers:
            envelope = await slack_socket.send("slash_commands", slash_command("status", trigger), to=one)
            await slack_socket.resend(envelope, to=two)
        for envelope in list(slack_socket.envelopes):
            await slack_socket.acked(envelope)
        for trigger in triggers:
            workflow_id = message_workflow_id("slack", f"command:{trigger}")
            assert (await stack.temporal.get_workflow_handle_for(MessageWorkflow.run, workflow_id).result()
                    ).outcome == "command"
        openings = [post for post in fake.posts if post.thread_ts is None]
        await until(lambda: all(len(thread_posts(fake, post.ts)) == 1 for post in openings), "every status said")
        await asyncio.sleep(1)
    assert len([post for post in fake.posts if post.thread_ts is None]) == 3, "one thread a command"
    assert all(len(thread_posts(fake, post.ts)) == 1 for post in openings)


async def test_a_refused_sender_s_command_is_answered_to_them_alone(
    stack: Stack, fake: FakeSlack, slack_socket: FakeSlackSocket, socket_settings: Settings
) -> None:
    settings = socket_settings.model_copy(update={"slack_allowed_users": frozenset({"U0SOMEONE1"})})
    async with socket_client(settings, stack.temporal, stack.db):
        await slack_socket.connection()
        envelope = await slack_socket.send("slash_commands", slash_command("fix it", f"1000.{uuid.uuid4().hex}"))
        ack = await slack_socket.acked(envelope)
    assert ack.payload is not None and ack.payload["response_type"] == "ephemeral"
    assert "SLACK_ALLOWED_USERS" in ack.payload["text"]
    assert fake.posts == [], "nothing said in the channel"


async def test_an_envelope_that_cannot_start_now_is_left_unacknowledged_and_taken_when_sent_again(
    stack: Stack, fake: FakeSlack, slack_socket: FakeSlackSocket, socket_settings: Settings, repo: Path,
    caplog: pytest.LogCaptureFixture
) -> None:
    """Temporal refuses (here: a namespace that does not exist): no acknowledgement, so Slack keeps the
    envelope and sends it again; the next process to connect starts it."""
    await stack.register(repo)
    refusing = await Client.connect(stack.temporal.service_client.config.target_host, namespace="no-such-namespace")
    ts = new_ts()
    async with socket_client(socket_settings, refusing, stack.db):
        await slack_socket.connection()
        envelope = await slack_socket.send("events_api", event_callback(app_mention(ts, f"<@{BOT_USER_ID}> fix")))
        await until(lambda: any("not acknowledged" in record.getMessage() for record in caplog.records),
                    "the envelope refused")
        assert slack_socket.acks_of(envelope) == [] and not await started(stack, ts)
    async with socket_client(socket_settings, stack.temporal, stack.db):
        ack = await slack_socket.acked(envelope)
        assert ack.connection == 2
        assert (await resolution(stack, ts)).outcome == "created"


async def test_slack_s_disconnect_request_is_followed_by_a_new_connection(
    stack: Stack, fake: FakeSlack, slack_socket: FakeSlackSocket, socket_settings: Settings
) -> None:
    async with socket_client(socket_settings, stack.temporal, stack.db):
        first = await slack_socket.connection()
        await first.socket.send_json({"type": "disconnect", "reason": "refresh_requested",
                                      "debug_info": {"host": "fake-slack"}})
        second = await slack_socket.connection(number=first.number + 1)
        await until(lambda: not first.open, "the old connection closed")
        assert second.open and slack_socket.urls_given == 2


async def test_a_wrong_app_token_is_said_and_tried_again_with_a_growing_wait(
    stack: Stack, fake: FakeSlack, slack_socket: FakeSlackSocket, socket_settings: Settings,
    caplog: pytest.LogCaptureFixture
) -> None:
    settings = socket_settings.model_copy(update={"slack_app_token": SecretStr("xapp-1-revoked")})
    async with socket_client(settings, stack.temporal, stack.db):
        await until(lambda: fake.calls("apps.connections.open") >= 2, "a second try")
    said = [record.getMessage() for record in caplog.records if "slack socket" in record.getMessage()]
    assert any("Slack refuses SLACK_APP_TOKEN (invalid_auth)" in line for line in said), said
    assert any("connecting again in 1 s" in line for line in said), said
    assert not any("xapp-1-revoked" in record.getMessage() for record in caplog.records)


def test_the_app_token_must_be_app_level_and_come_with_a_bot_token() -> None:
    with pytest.raises(ConfigurationError, match="SLACK_APP_TOKEN: .*app-level token") as refused:
        load_settings(slack_app_token="xoxb-not-an-app-token", slack_bot_token="xoxb-1")
    assert "xoxb-not-an-app-token" not in str(refused.value)
    with pytest.raises(ConfigurationError, match="SLACK_APP_TOKEN needs SLACK_BOT_TOKEN"):
        load_settings(slack_app_token="xapp-1-A-1-x")
