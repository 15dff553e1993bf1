"""Asking the human (docs/approvals.md), end to end through the test adapter: the real Claude Code
against the fake Anthropic API, real git, PostgreSQL, Temporal and bubblewrap. A rule makes a call
wait for a person; the run ends its turn without it, the request comes with buttons, and the answer
resumes the session."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import AsyncIterator

import pytest

from tests.agent_clis import claude_binary, use_fake_anthropic
from tests.approvals import approval, press, request_of, runs_when_ended, use_approvals
from tests.conftest import Stack
from tests.fakes.anthropic_api import FakeAnthropicApi
from tests.fakes.model_api import run, text, tool


@pytest.fixture
async def claude(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeAnthropicApi]:
    async with FakeAnthropicApi() as api:
        use_fake_anthropic(monkeypatch, api)
        stack.settings.agent_driver, stack.settings.agent_executable = "claude", str(claude_binary())
        use_approvals(stack)
        yield api


def conversation() -> str:
    return f"ask-{uuid.uuid4().hex[:6]}"


async def test_allow_once_runs_the_call_and_the_run_goes_on_to_its_answer(
        stack: Stack, repo: Path, claude: FakeAnthropicApi) -> None:
    await stack.register(repo)
    talk = conversation()
    claude.then(run("touch pushed.txt"), run("touch pushed.txt"), text("Touched it."))
    first = (await stack.say(talk, "touch pushed.txt please", user="alice"))["result"]
    asked = await request_of(stack, talk)
    assert "touch pushed.txt" in asked["text"] and "alice" in asked["text"]
    assert [button["label"] for button in asked["buttons"]] == ["Allow once", "Allow for this conversation", "Deny"]
    worktree = Path(first["workingPath"])
    assert not (worktree / "pushed.txt").exists(), "the call waits for the answer"

    status, body = await press(stack, asked["code"], "once", user="mallory")
    assert status == 403 and "started this run" in body["detail"]
    assert (await approval(stack, asked["code"]))["state"] == "pending", "a stranger's press decides nothing"

    status, body = await press(stack, asked["code"], "once", user="alice")
    assert status == 200, body
    runs = await runs_when_ended(stack, talk, 2)
    assert [run["status"] for run in runs] == ["waiting", "done"]
    assert (worktree / "pushed.txt").exists(), "allowed, the command ran"
    resumed = claude.conversation_texts(len(claude.calls) - 2)
    assert "alice approved this call" in resumed
    replies = await stack.replies(talk)
    assert any("ran `touch pushed.txt` (exit 0)" in reply and "Touched it." in reply for reply in replies), replies
    edited = next(reply for reply in replies if asked["code"] in reply)
    assert "Allowed once by alice" in edited
    answered = await approval(stack, asked["code"])
    assert answered["state"] == "allowed" and answered["answered_by"] == "alice" and answered["answered_at"]
    status, body = await press(stack, asked["code"], "deny", user="alice")
    assert status == 409 and "already allowed by alice" in body["detail"]


async def test_deny_keeps_the_call_from_running_and_the_agent_is_told(
        stack: Stack, repo: Path, claude: FakeAnthropicApi) -> None:
    await stack.register(repo)
    talk = conversation()
    claude.then(run("touch denied.txt"), text("Understood, I left it."))
    first = (await stack.say(talk, "touch denied.txt"))["result"]
    asked = await request_of(stack, talk)
    status, _ = await press(stack, asked["code"], "deny", reason="not on main")
    assert status == 200
    runs = await runs_when_ended(stack, talk, 2)
    assert [run["status"] for run in runs] == ["waiting", "done"]
    assert not (Path(first["workingPath"]) / "denied.txt").exists()
    told = claude.conversation_texts(len(claude.calls) - 1)
    assert "tester denied this call" in told and "not on main" in told
    replies = await stack.replies(talk)
    assert any("Understood, I left it." in reply for reply in replies)
    assert any("Denied by tester" in reply and "not on main" in reply for reply in replies)


async def test_a_question_of_the_agent_gets_buttons_and_its_answer_reaches_the_model(
        stack: Stack, repo: Path, claude: FakeAnthropicApi) -> None:
    await stack.register(repo)
    talk = conversation()
    question = {"questions": [{"question": "Which database?", "header": "DB", "multiSelect": False,
                               "options": [{"label": "Postgres", "description": "the big one"},
                                           {"label": "SQLite", "description": "a file"}]}]}
    claude.then(tool("AskUserQuestion", question), text("SQLite it is."))
    await stack.say(talk, "add a database")
    asked = await request_of(stack, talk)
    assert "Which database?" in asked["text"]
    assert [button["label"] for button in asked["buttons"]] == ["Postgres", "SQLite"]
    status, _ = await press(stack, asked["code"], "option", option=1)
    assert status == 200
    await runs_when_ended(stack, talk, 2)
    resumed = claude.conversation_texts(len(claude.calls) - 1)
    assert "Which database?" in resumed and "SQLite" in resumed and "answered by tester" in resumed
