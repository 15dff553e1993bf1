"""A conversation whose own worktree was removed and then restored goes on in the same agent session
(issue "First hour", item 4): the restore makes a new environment, but it is the same work. The real
Claude Code, against a fake model API, through the test adapter."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import AsyncIterator

import pytest

from activities.runs.run_agent import MOVED_NOTICE
from tests.agent_clis import claude_binary, use_fake_anthropic
from tests.agent_runs import finished_run, replies_when
from tests.conftest import Stack
from tests.fakes import anthropic_api
from tests.fakes.model_api import text


@pytest.fixture
async def model(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[anthropic_api.FakeAnthropicApi]:
    async with anthropic_api.FakeAnthropicApi() as api:
        use_fake_anthropic(monkeypatch, api)
        stack.settings.agent_driver, stack.settings.agent_executable = "claude", str(claude_binary())
        yield api


async def test_a_restored_worktree_keeps_its_conversations_session(
    stack: Stack, repo: Path, model: anthropic_api.FakeAnthropicApi
) -> None:
    await stack.register(repo)
    conversation = f"restore-{uuid.uuid4().hex[:6]}"
    model.then(text("Noted: apples."))
    first = (await stack.say(conversation, "remember apples"))["result"]
    first_run = await finished_run(stack, first["agentRunId"])
    assert first_run["status"] == "done", first_run

    removed = (await stack.say(conversation, "/worktree remove --force"))["result"]["replies"]
    assert removed[0].startswith("Removed worktree"), removed
    restored = (await stack.say(conversation, f"/worktree restore {first['branch']}"))["result"]["replies"]
    assert restored[0].startswith("Restored"), restored

    model.then(text("You said apples."))
    calls_before = len(model.calls)
    second = (await stack.say(conversation, "what did I say?"))["result"]
    second_run = await finished_run(stack, second["agentRunId"])

    assert second["environmentId"] != first["environmentId"], "the restore is a new environment"
    assert second_run["session_id"] == first_run["session_id"], "the same session"
    assert "remember apples" in model.calls[calls_before].text(), "the agent saw the first exchange"
    replies = await replies_when(stack, conversation, lambda texts: "You said apples." in texts[-1])
    assert MOVED_NOTICE.strip("_") not in replies[-1]
