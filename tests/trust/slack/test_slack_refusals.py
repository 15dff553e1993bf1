"""Slack's allow rule: without SLACK_ALLOWED_TEAMS, the workspace the app is installed in; a person from
another workspace (in a channel shared across workspaces) gets one reply and changes nothing."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Stack
from tests.fakes.slack_api import BOT_USER_ID, FakeSlack
from tests.platforms.slack import CHANNEL, app_mention, new_ts, resolution, send
from tests.trust.checks import nothing_changed, recorded_as_refused

OTHER_TEAM = "T0OTHER0001"


def from_other_workspace(text: str, thread_ts: str | None = None) -> dict:
    ts = new_ts()
    return {**app_mention(ts, f"<@{BOT_USER_ID}> {text}", thread_ts), "user": "U0GUEST001", "user_team": OTHER_TEAM}


async def test_a_person_from_another_workspace_gets_one_reply_and_nothing_changes(
    stack: Stack, fake: FakeSlack, repo: Path
) -> None:
    await stack.register(repo)
    first = from_other_workspace("run this")
    await send(stack, first)
    refused = await resolution(stack, first["ts"])
    assert refused.outcome == "refused"
    assert [(post.channel, post.thread_ts, post.text) for post in fake.posts] == [(
        CHANNEL, first["ts"], "I only take requests from the workspaces I am set up for. To allow yours, add its id "
                              f"`{OTHER_TEAM}` to `SLACK_ALLOWED_TEAMS`.")]
    again = from_other_workspace("/status", thread_ts=first["ts"])
    await send(stack, again)
    assert (await resolution(stack, again["ts"])).outcome == "refused"
    assert len(fake.posts) == 1
    await nothing_changed(stack, repo)
    listed = await recorded_as_refused(stack, "slack", f"message:slack:{CHANNEL}:{first['ts']}")
    assert listed["sender"] == f"user U0GUEST001 of workspace {OTHER_TEAM}"

    # A person of the app's own workspace, in the same thread, works as before.
    own = app_mention(new_ts(), f"<@{BOT_USER_ID}> fix it", thread_ts=first["ts"])
    await send(stack, own)
    assert (await resolution(stack, own["ts"])).outcome == "created"
