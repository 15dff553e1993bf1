"""Asking the human in a Slack thread: buttons, a press through the interactivity URL, a refusal
only the presser sees. The setting: conftest.py."""

from __future__ import annotations

from pathlib import Path

from tests.approvals import (
    SLACK_OTHER, TOOL_LABELS, allow_once_script, allowed_push_answered, approval_code, approval_state,
    conversation_runs_when_ended, deny_script, until,
)
from tests.conftest import Stack
from tests.fakes.anthropic_api import FakeAnthropicApi
from tests.fakes.slack_api import BOT_USER_ID, FakeSlack
from tests.platforms import slack as slack_platform
from tests.results import run_messages


async def slack_mention(stack: Stack, said: str) -> tuple[str, Path]:
    """A person's mention of the bot starts a thread; its conversation id and worktree."""
    ts = slack_platform.new_ts()
    await slack_platform.send(stack, slack_platform.app_mention(ts, f"<@{BOT_USER_ID}> {said}"))
    resolution = await slack_platform.resolution(stack, ts)
    assert resolution.outcome == "created" and resolution.working_path, resolution
    return f"{slack_platform.CHANNEL}:{ts}", Path(resolution.working_path)


async def slack_request(slack: FakeSlack) -> slack_platform.Post:
    await until(lambda: any(slack_platform.buttons(slack.blocks(post.ts)) for post in slack.posts),
                "a Slack message with buttons")
    return slack_platform.request_message(slack)


def slack_shown(slack: FakeSlack, ts: str) -> tuple[str, list[dict]]:
    """What message `ts` reads now: its text and buttons."""
    texts = [post.text for post in slack.posts if post.ts == ts] + [edit.text for edit in slack.edits if edit.ts == ts]
    return texts[-1], slack_platform.buttons(slack.blocks(ts))


def slack_texts(slack: FakeSlack) -> list[str]:
    return [slack_shown(slack, post.ts)[0] for post in slack.posts]


async def test_slack_allow_once_runs_the_push_and_the_run_ends_with_its_answer(
        stack: Stack, slack: FakeSlack, claude: FakeAnthropicApi) -> None:
    allow_once_script(claude)
    conversation, _ = await slack_mention(stack, "push it please")
    asked = await slack_request(slack)
    assert asked.thread_ts == conversation.split(":")[1], "the request comes into the thread"
    assert "git push origin HEAD" in asked.text
    assert [button["text"]["text"] for button in slack_platform.buttons(asked.blocks or [])] == TOOL_LABELS
    code = await approval_code(stack, "slack", conversation)

    await slack_platform.press(stack.api, asked, "Allow once", user=SLACK_OTHER)
    await until(lambda: any(e.user == SLACK_OTHER for e in slack.ephemerals), "the refusal, to the presser alone")
    (refusal,) = slack.ephemerals
    assert refusal.thread_ts == asked.thread_ts and "Only the person who started this run" in refusal.text
    assert await approval_state(stack, code) == "pending", "another person's press decides nothing"
    assert slack_shown(slack, asked.ts)[1], "the buttons stay for the person who may answer"

    await slack_platform.press(stack.api, asked, "Allow once")
    runs = await allowed_push_answered(stack, claude, f"slack:{conversation}", f"<@{slack_platform.USER}>",
                                       lambda: slack_texts(slack))
    assert any("ran `git push origin HEAD` (exit" in said for said in await run_messages(stack.db, runs[1]["id"]))
    shown, buttons = slack_shown(slack, asked.ts)
    assert f"Allowed once by <@{slack_platform.USER}>" in shown and buttons == [], "edited to its answer"
    assert await approval_state(stack, code) == "allowed"


async def test_slack_deny_keeps_the_command_from_running_and_the_agent_is_told(
        stack: Stack, slack: FakeSlack, claude: FakeAnthropicApi) -> None:
    deny_script(claude)
    conversation, worktree = await slack_mention(stack, "touch denied.txt")
    asked = await slack_request(slack)
    assert "touch denied.txt" in asked.text

    await slack_platform.press(stack.api, asked, "Deny")
    runs = await conversation_runs_when_ended(stack, f"slack:{conversation}", 2)
    assert [item["status"] for item in runs] == ["waiting", "done"]
    assert not (worktree / "denied.txt").exists(), "denied, the command never ran"
    assert f"<@{slack_platform.USER}> denied this call" in claude.conversation_texts(len(claude.calls) - 1)
    await until(lambda: any("Understood, I left it." in said for said in slack_texts(slack)), "the agent's answer")
    shown, buttons = slack_shown(slack, asked.ts)
    assert f"Denied by <@{slack_platform.USER}>" in shown and buttons == []
    assert slack.ephemerals == []
