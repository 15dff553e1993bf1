"""Asking the human with Codex (docs/approvals.md), end to end through the test adapter: the real Codex
CLI, driven through `codex app-server`, against the fake OpenAI API; real git, PostgreSQL, Temporal
and bubblewrap. Its command and patch approval requests are relayed as Claude Code's are: the same
rules, buttons, durable wait and resume."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import AsyncIterator

import pytest

from isolator.settings import ConfigurationError, load_settings
from tests.agent_clis import codex_binary, use_fake_openai
from tests.approvals import approval, press, request_of, runs_when_ended, use_approvals
from tests.conftest import Stack
from tests.fakes.model_api import run, text, write
from tests.fakes.openai_api import FakeOpenAiApi
from tests.gitrepos import git

RULES = "ask: Bash(git push:*), Bash(touch:*), Write(migrations/**); deny: Bash(rm -rf:*)"


@pytest.fixture
async def codex(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeOpenAiApi]:
    async with FakeOpenAiApi() as api:
        use_fake_openai(monkeypatch, api, stack.tmp_path / "codex-home")
        stack.settings.agent_driver, stack.settings.agent_executable = "codex", str(codex_binary())
        use_approvals(stack, RULES)
        yield api


def conversation() -> str:
    return f"codex-ask-{uuid.uuid4().hex[:6]}"


def last_input(api: FakeOpenAiApi) -> str:
    """Everything the model was given in its last request, as one text."""
    return json.dumps(api.calls[-1].body.get("input", []))


def test_codex_with_approvals_starts_and_another_agent_is_refused_in_one_line() -> None:
    assert load_settings(agent_driver="codex", agent_approvals_line=RULES).agent_approvals.active
    with pytest.raises(ConfigurationError, match="approvals need Claude Code or Codex app-server; AGENT=aider cannot ask"):
        load_settings(agent_driver="aider", agent_approvals_line=RULES)


async def test_codex_asks_for_a_command_and_allow_once_resumes_its_thread_with_it(
        stack: Stack, repo: Path, codex: FakeOpenAiApi) -> None:
    await stack.register(repo)
    talk = conversation()
    codex.then(run("echo looked"), run("touch pushed.txt"), run("touch pushed.txt"), text("Touched it."))
    first = (await stack.say(talk, "touch pushed.txt please", user="alice"))["result"]
    asked = await request_of(stack, talk)
    assert "touch pushed.txt" in asked["text"] and "alice" in asked["text"] and "/bin/bash" not in asked["text"]
    assert [button["label"] for button in asked["buttons"]] == ["Allow once", "Allow for this conversation", "Deny"]
    worktree = Path(first["workingPath"])
    assert not (worktree / "pushed.txt").exists(), "the call waits for the answer"
    replies = await stack.replies(talk)
    assert any("ran `echo looked` (exit 0)" in reply for reply in replies), replies

    status, body = await press(stack, asked["code"], "once", user="alice")
    assert status == 200, body
    runs = await runs_when_ended(stack, talk, 2)
    assert [run["status"] for run in runs] == ["waiting", "done"]
    assert runs[0]["session_id"] and runs[1]["session_id"] == runs[0]["session_id"], "the same thread, resumed"
    assert (worktree / "pushed.txt").exists(), "allowed, the command ran"
    assert "alice approved this call" in last_input(codex) and "looked" in last_input(codex)
    replies = await stack.replies(talk)
    assert any("ran `touch pushed.txt` (exit 0)" in reply and "Touched it." in reply for reply in replies), replies
    assert any("Paused after" in reply and "needs a person's approval" in reply for reply in replies), replies
    assert (await approval(stack, asked["code"]))["state"] == "allowed"


async def test_a_patch_a_rule_names_waits_and_a_denial_reaches_the_model(
        stack: Stack, repo: Path, codex: FakeOpenAiApi) -> None:
    await stack.register(repo)
    talk = conversation()
    codex.then(write("notes.txt", "free"), write("migrations/001.sql", "DROP TABLE users;"),
               text("Understood, no migration."))
    first = (await stack.say(talk, "add a migration"))["result"]
    asked = await request_of(stack, talk)
    assert "write `migrations/001.sql`" in asked["text"] and "DROP TABLE users;" in asked["text"], asked["text"]
    worktree = Path(first["workingPath"])
    assert (worktree / "notes.txt").read_text() == "free\n", "a patch no rule names is applied unasked"
    assert not (worktree / "migrations" / "001.sql").exists()
    status, _ = await press(stack, asked["code"], "deny", reason="not today")
    assert status == 200
    runs = await runs_when_ended(stack, talk, 2)
    assert [run["status"] for run in runs] == ["waiting", "done"]
    assert not (worktree / "migrations" / "001.sql").exists()
    assert "tester denied this call" in last_input(codex) and "not today" in last_input(codex)
    assert (await approval(stack, asked["code"]))["state"] == "denied"


async def test_a_denied_command_is_declined_without_asking_and_the_turn_goes_on(
        stack: Stack, repo: Path, codex: FakeOpenAiApi) -> None:
    await stack.register(repo)
    talk = conversation()
    (repo / "keep.txt").write_text("kept\n")
    git("add", "keep.txt", cwd=repo)
    git("commit", "-qm", "keep", cwd=repo)
    codex.then(run("rm -rf keep.txt"), text("I could not remove it."))
    first = (await stack.say(talk, "remove keep.txt"))["result"]
    runs = await runs_when_ended(stack, talk, 1)
    assert runs[0]["status"] == "done" and (await stack.api.get("/api/approvals")).json() == []
    assert (Path(first["workingPath"]) / "keep.txt").exists(), "declined: it never ran"
    replies = await stack.replies(talk)
    assert any("I could not remove it." in reply for reply in replies), replies
    assert "rejected" in last_input(codex), "the model is told"
