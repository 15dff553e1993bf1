"""Agents as their users configure them, in the sandbox (issue "First hour", 2, 3 and 31): the real Codex
with a CODEX_HOME of the operator's, outside the agent home; the real Claude Code that `make install`
bundles when none is on PATH; the example agent run as a plain command, which keeps its memory in its
session folder; a crashed agent told by its panic's message. Real git, PostgreSQL and Temporal."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Iterator

import pytest

from tests.agent_clis import ROOT, codex_binary, use_fake_anthropic, use_fake_openai
from tests.agent_runs import finished_run, replies_when
from tests.conftest import Stack
from tests.fakes import anthropic_api, openai_api
from tests.fakes.model_api import text

EXAMPLE_AGENT = ROOT / "examples" / "agent.py"


@pytest.fixture
def operators_folder() -> Iterator[Path]:
    """A folder outside the test's own (which the tests' sandbox lets every program write) and outside
    /tmp (a sandbox's own there): read-only in the sandbox unless a driver names it."""
    folder = Path(tempfile.mkdtemp(prefix="operators-", dir=codex_binary().parents[2]))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


async def test_codex_with_the_operators_codex_home_answers_and_resumes(
        stack: Stack, repo: Path, operators_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    async with openai_api.FakeOpenAiApi() as api:
        use_fake_openai(monkeypatch, api, operators_folder / "codex-home")
        stack.settings.agent_driver, stack.settings.agent_executable = "codex", str(codex_binary())
        await stack.register(repo)
        conversation = f"codex-home-{uuid.uuid4().hex[:6]}"
        api.then(text("Apples noted."))
        first = (await stack.say(conversation, "remember apples"))["result"]
        replies = await replies_when(stack, conversation, lambda texts: "— " in texts[-1], seconds=60)
        assert (await finished_run(stack, first["agentRunId"]))["status"] == "done", replies[-1]
        assert "Apples noted." in replies[-1]
        assert list(stack.settings.agent_sessions_dir.glob("*/codex/sessions/**/rollout-*")), \
            "its session is in its conversation's own CODEX_HOME"
        assert not list((operators_folder / "codex-home").rglob("rollout-*")), "the operator's folder is not written"

        api.then(text("You said apples."))
        calls_before = len(api.calls)
        second = (await stack.say(conversation, "what did I say?"))["result"]
        assert (await finished_run(stack, second["agentRunId"]))["status"] == "done"
        assert "remember apples" in api.calls[calls_before].text(), "the thread was resumed"


async def test_claude_without_one_on_path_runs_the_bundled_one(
        stack: Stack, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folders = os.environ.get("PATH", "").split(os.pathsep)
    monkeypatch.setenv("PATH", os.pathsep.join(folder for folder in folders if not (Path(folder) / "claude").exists()))
    async with anthropic_api.FakeAnthropicApi() as api:
        use_fake_anthropic(monkeypatch, api)
        stack.settings.agent_driver, stack.settings.agent_executable = "claude", None  # AGENT=claude, nothing else
        await stack.register(repo)
        conversation = f"bundled-{uuid.uuid4().hex[:6]}"
        api.then(text("Hello from the bundled one."))
        created = (await stack.say(conversation, "hello"))["result"]
        replies = await replies_when(stack, conversation, lambda texts: "— " in texts[-1], seconds=60)
        assert (await finished_run(stack, created["agentRunId"]))["status"] == "done", replies[-1]
        assert "Hello from the bundled one." in replies[-1]


async def test_the_example_agent_as_a_command_remembers_in_its_session_folder(stack: Stack, repo: Path) -> None:
    stack.settings.agent_command_line = str(EXAMPLE_AGENT)
    await stack.register(repo)
    conversation = f"example-command-{uuid.uuid4().hex[:6]}"
    first = (await stack.say(conversation, "remember the milk"))["result"]
    assert (await finished_run(stack, first["agentRunId"]))["status"] == "done"
    replies = await replies_when(stack, conversation, lambda texts: "— Done" in texts[-1])
    assert "first message of our session" in replies[-1] and "{" not in replies[-1], "plain text, no events"
    second = (await stack.say(conversation, "and the eggs"))["result"]
    record = await finished_run(stack, second["agentRunId"])
    replies = await replies_when(stack, conversation, lambda texts: "— " in texts[-1] and "eggs" in texts[-1])
    assert record["status"] == "done", replies[-1]
    assert "Earlier in this conversation you said: “remember the milk”." in replies[-1]


async def test_a_panicking_agent_is_told_by_its_panics_message(stack: Stack, repo: Path) -> None:
    program = ("import sys; sys.stderr.write(\"thread 'main' panicked at src/session.rs:12:5:\\n"
               "failed to create session file: Read-only file system (os error 30)\\n"
               + "".join(f"  {frame}: <unknown>\\n" for frame in range(14)) + "\"); sys.exit(101)")
    stack.settings.agent_command_line = shlex.join([sys.executable, "-c", program])
    await stack.register(repo)
    conversation = f"panic-{uuid.uuid4().hex[:6]}"
    created = (await stack.say(conversation, "hello"))["result"]
    assert (await finished_run(stack, created["agentRunId"]))["status"] == "failed"
    replies = await replies_when(stack, conversation, lambda texts: "— Failed" in texts[-1])
    assert ("The agent failed: it crashed: failed to create session file: Read-only file system (os error 30)."
            in replies[-1]), replies[-1]
    assert "<unknown>" not in replies[-1]
