"""Asking the human in a Discord thread: message buttons, a press as an interaction, a refusal only
the presser sees. The setting: conftest.py."""

from __future__ import annotations

from pathlib import Path
from typing import AsyncIterator

import pytest

from tests.approvals import (
    DISCORD_OTHER, EPHEMERAL, TOOL_LABELS, allow_once_script, allowed_push_answered, approval_code, approval_state,
    conversation_runs_when_ended, deny_script, until,
)
from tests.conftest import Stack
from tests.fakes.anthropic_api import FakeAnthropicApi
from tests.fakes.discord_api import BOT_USER as DISCORD_BOT
from tests.fakes.discord_api import PERSON, ROLE_ID, FakeDiscord, FollowUp, SentMessage
from tests.platforms import discord as discord_platform
from workers.discord_listener import running_discord_listener


@pytest.fixture
async def listener(stack: Stack, discord: FakeDiscord) -> AsyncIterator[None]:
    """The Gateway listener of `isolator discord`, connected to the fake and ready."""
    async with running_discord_listener(stack.settings, stack.temporal, stack.db):
        await discord.wait_ready()
        yield


async def discord_mention(stack: Stack, discord: FakeDiscord, said: str) -> tuple[str, Path]:
    """A person's mention of the bot in the channel starts a thread; the thread's id (the conversation's)
    and its worktree."""
    message = discord.message_create(f"<@{DISCORD_BOT['id']}> {said}")
    await discord.dispatch("MESSAGE_CREATE", message)
    resolution = await discord_platform.resolution(stack, message["id"])
    assert resolution.outcome == "created" and resolution.working_path, resolution
    return message["id"], Path(resolution.working_path)


async def discord_request(discord: FakeDiscord) -> SentMessage | FollowUp:
    await until(lambda: discord_platform.request_message(discord) is not None, "a Discord message with buttons")
    asked = discord_platform.request_message(discord)
    assert asked is not None
    return asked


def discord_shown(discord: FakeDiscord, message_id: str) -> SentMessage:
    """Message `message_id` as it reads now (its last edit)."""
    return [sent for sent in discord.sent + discord.edits if sent.message_id == message_id][-1]


def discord_texts(discord: FakeDiscord) -> list[str]:
    return [discord_shown(discord, sent.message_id).content for sent in discord.sent]


async def test_discord_allow_once_runs_the_push_and_the_run_ends_with_its_answer(
        stack: Stack, discord: FakeDiscord, listener: None, claude: FakeAnthropicApi) -> None:
    allow_once_script(claude)
    thread, _ = await discord_mention(stack, discord, "push it please")
    asked = await discord_request(discord)
    assert isinstance(asked, SentMessage) and asked.channel_id == thread, "the request comes into the thread"
    assert "git push origin HEAD" in asked.content
    assert [button["label"] for button in discord_platform.buttons_of(asked)] == TOOL_LABELS
    code = await approval_code(stack, "discord", thread)

    refused = await discord_platform.press(stack.api, asked, "Allow once", DISCORD_OTHER, roles=(ROLE_ID,))
    assert refused.status_code == 200, refused.text
    body = refused.json()
    assert (body["type"], body["data"]["flags"]) == (4, EPHEMERAL), "told to the presser alone"
    assert "Only the person who started this run" in body["data"]["content"]
    assert await approval_state(stack, code) == "pending", "another person's press decides nothing"

    taken = await discord_platform.press(stack.api, asked, "Allow once")
    assert taken.status_code == 200 and taken.json()["type"] == 6, taken.text  # the workflow edits the request
    await allowed_push_answered(stack, claude, f"discord:{thread}", f"<@{PERSON['id']}>",
                                lambda: discord_texts(discord))
    edited = discord_shown(discord, asked.message_id)
    assert f"Allowed once by <@{PERSON['id']}>" in edited.content and edited.components == [], "edited to its answer"
    assert await approval_state(stack, code) == "allowed"


async def test_discord_deny_keeps_the_command_from_running_and_the_agent_is_told(
        stack: Stack, discord: FakeDiscord, listener: None, claude: FakeAnthropicApi) -> None:
    deny_script(claude)
    thread, worktree = await discord_mention(stack, discord, "touch denied.txt")
    asked = await discord_request(discord)

    taken = await discord_platform.press(stack.api, asked, "Deny")
    assert taken.status_code == 200 and taken.json()["type"] == 6, taken.text
    runs = await conversation_runs_when_ended(stack, f"discord:{thread}", 2)
    assert [item["status"] for item in runs] == ["waiting", "done"]
    assert not (worktree / "denied.txt").exists(), "denied, the command never ran"
    assert f"<@{PERSON['id']}> denied this call" in claude.conversation_texts(len(claude.calls) - 1)
    await until(lambda: any("Understood, I left it." in said for said in discord_texts(discord)), "the answer")
    edited = discord_shown(discord, asked.message_id)
    assert f"Denied by <@{PERSON['id']}>" in edited.content and edited.components == []
