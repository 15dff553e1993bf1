"""A Slack request replayed: the same signed body posted again (Slack's own retries carry `X-Slack-Retry-Num`;
a replay within the signature's five minutes carries nothing new) is the same event, and starts nothing
(docs/platforms.md#redeliveries)."""

from __future__ import annotations

import json
from pathlib import Path

from isolator.contracts.approvals import press_value
from tests.agents import command
from tests.approvals import conversation_runs_when_ended
from tests.conftest import Stack
from tests.fakes.slack_api import BOT_USER_ID, FakeSlack, Post
from tests.platforms.slack import (
    CHANNEL,
    app_mention,
    block_actions,
    event_callback,
    interaction_body,
    new_ts,
    post_interaction,
    resolution,
    send,
    signed,
)


async def test_a_replayed_mention_runs_the_agent_once_and_the_next_message_runs_too(
        stack: Stack, fake: FakeSlack, repo: Path, tmp_path: Path) -> None:
    stack.settings.agent_command_line = command("recorder", str(tmp_path / "runs.log"), "0")
    await stack.register(repo)
    ts = new_ts()
    body = json.dumps(event_callback(app_mention(ts, f"<@{BOT_USER_ID}> fix the login"))).encode()
    for retry in ({}, {"x-slack-retry-num": "1", "x-slack-retry-reason": "http_timeout"}, {}):
        response = await stack.api.post("/webhooks/slack", content=body, headers={**signed(body), **retry})
        assert response.status_code == 200, response.text
    await resolution(stack, ts)
    # A second message in the thread, queued after whatever the replays queued: once it has run, every run has.
    later = new_ts()
    await send(stack, app_mention(later, f"<@{BOT_USER_ID}> and the logout", thread_ts=ts))
    await resolution(stack, later)

    runs = await conversation_runs_when_ended(stack, f"slack:{CHANNEL}:{ts}", 2)
    assert [run["message"] for run in runs] == ["fix the login", "and the logout"]


async def test_a_replayed_press_is_answered_once_and_the_next_press_is_answered_too(
        stack: Stack, fake: FakeSlack) -> None:
    request = Post(CHANNEL, thread_ts=new_ts(), text="May the agent run `git push`?", ts=new_ts())
    button = {"action_id": "once", "text": {"type": "plain_text", "text": "Allow once"},
              "value": press_value("NOPE12", "once")}
    body = interaction_body(block_actions(request, button))
    for _ in range(2):
        assert (await post_interaction(stack.api, body)).status_code == 200
    unknown = "There is no request `NOPE12` waiting here."
    assert [ephemeral.text for ephemeral in fake.ephemerals] == [unknown], "the replay told nobody anything"

    # The same button pressed again is another press (its own `action_ts`), and is answered.
    assert (await post_interaction(stack.api, interaction_body(block_actions(request, button)))).status_code == 200
    assert [ephemeral.text for ephemeral in fake.ephemerals] == [unknown, unknown]
