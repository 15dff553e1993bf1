"""The platform side under stress: its API failing for a while, and a burst of webhook deliveries."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from tests.conftest import Stack
from tests.fakes.slack_api import BOT_USER_ID, FakeSlack
from tests.gitrepos import first_replies, worktree_paths
from tests.platforms.slack import CHANNEL, app_mention, new_ts, resolution, send
from workflows.naming import thread_branch


async def wait_for_posts(fake: FakeSlack, count: int, seconds: float = 60) -> None:
    for _ in range(int(seconds * 10)):
        if len(fake.posts) >= count:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"{len(fake.posts)} posts after {seconds} s, expected {count}")


async def test_a_failing_platform_api_gets_the_reply_once_when_it_recovers(
    stack: Stack, fake: FakeSlack, repo: Path
) -> None:
    await stack.register(repo)
    fake.fail("chat.postMessage", "internal_error", status=500, times=3)
    ts = new_ts()
    await send(stack, app_mention(ts, f"<@{BOT_USER_ID}> fix it"))

    assert (await resolution(stack, ts)).outcome == "created"  # the reply waits; the decision does not
    # The worktree's line, then (no agent being configured) the notice: each delivered once, in order.
    await wait_for_posts(fake, 2)
    await asyncio.sleep(2)  # time for a wrong second delivery to show
    assert fake.calls("chat.postMessage") == 5  # three refused, then the two delivered
    assert [(post.channel, post.thread_ts, post.text) for post in fake.posts] == [
        (CHANNEL, ts, text) for text in first_replies(thread_branch(f"slack:{CHANNEL}:{ts}"), repo)]
    statuses = await stack.db.fetch("SELECT status FROM outbound_messages WHERE platform = 'slack'")
    assert [row["status"] for row in statuses] == ["sent", "sent"]


async def test_two_hundred_deliveries_across_twenty_threads_make_twenty_worktrees_and_replies(
    stack: Stack, fake: FakeSlack, repo: Path, caplog: pytest.LogCaptureFixture
) -> None:
    await stack.register(repo)
    threads = [new_ts() for _ in range(20)]
    messages = [(thread, ts) for thread in threads for ts in [thread] + [new_ts() for _ in range(9)]]
    caplog.set_level(logging.WARNING)

    await asyncio.gather(*(
        send(stack, app_mention(ts, f"<@{BOT_USER_ID}> message {index}", thread_ts=None if ts == thread else thread))
        for index, (thread, ts) in enumerate(messages)
    ))
    outcomes = await asyncio.gather(*(resolution(stack, ts) for _, ts in messages))

    assert len({result.working_path for result in outcomes}) == 20
    assert len(worktree_paths(repo)) == 20
    assert await stack.db.fetchval("SELECT count(*) FROM isolation_environments WHERE status = 'active'") == 20
    # Each thread: "Working in …", then, as no agent is configured, the one notice that none answers.
    await wait_for_posts(fake, 40, seconds=120)  # a loaded 2-core runner: workflow tasks of seconds
    assert sorted(post.thread_ts for post in fake.posts) == sorted(threads * 2)
    assert [record.getMessage() for record in caplog.records if record.levelno >= logging.ERROR] == []
