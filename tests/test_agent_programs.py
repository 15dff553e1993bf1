"""Which program a named agent's run starts and which folders of its own it may write (issue "First
hour", 2 and 3), and what a crashed agent said: a panic's message, never a backtrace frame."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from activities.runs.agents import claude, codex
from activities.runs.agents.base import Turn, last_words
from isolator.settings import Settings
from tests.agent_clis import claude_binary
from workers.dev import agent_line

CODEX_STACK_BACKTRACE = [  # Codex 0.169 with a CODEX_HOME it cannot write, as it printed it
    "WARNING: proceeding, even though we could not create PATH aliases: Read-only file system (os error 30)",
    "Reading additional input from stdin...",
    "Error: failed to initialize in-process app-server client: Read-only file system (os error 30)",
    "",
    "Stack backtrace:",
    *[f"  {frame:2}: <unknown>" for frame in range(14)],
]
PANIC = [
    "thread 'main' panicked at codex-rs/core/src/rollout/recorder.rs:121:14:",
    "failed to create session file: Read-only file system (os error 30)",
    "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
]


@pytest.mark.parametrize("lines, said", [
    (CODEX_STACK_BACKTRACE,
     "Error: failed to initialize in-process app-server client: Read-only file system (os error 30)"),
    (PANIC, "it crashed: failed to create session file: Read-only file system (os error 30)"),
    ([*PANIC[:2], "stack backtrace:", "   0: 0x55d1c0ffee - std::panicking::begin_panic", "  13: <unknown>"],
     "it crashed: failed to create session file: Read-only file system (os error 30)"),
    (["thread 'main' panicked at 'index out of bounds', src/main.rs:2:5"], "it crashed: index out of bounds"),
    (["Traceback (most recent call last):", '  File "a.py", line 1', "OSError: [Errno 30] Read-only file system"],
     "OSError: [Errno 30] Read-only file system"),
    (["", "  "], ""),
])
def test_a_crashed_agents_last_words_are_its_message_not_a_backtrace_frame(lines: list[str], said: str) -> None:
    assert last_words(lines) == said


def test_a_crashed_codex_is_told_in_its_own_words() -> None:
    reader = codex.Reader()
    reader.end(101, PANIC)
    assert reader.error is not None and reader.error.detail.startswith("it crashed: failed to create session file")


def test_codex_may_write_the_codex_home_its_operator_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    turn = Turn("hi", tmp_path, None, tmp_path / "session", 1)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    assert codex.invocation(["codex"], turn).writable == []  # ~/.codex: in the agent home, writable already
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "operators-codex"))
    assert codex.invocation(["codex"], turn).writable == [tmp_path / "operators-codex"]
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-config"))
    assert claude.invocation(["claude"], turn).writable == [tmp_path / "claude-config"]


def without_claude_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    folders = os.environ.get("PATH", "").split(os.pathsep)
    monkeypatch.setenv("PATH", os.pathsep.join(folder for folder in folders if not (Path(folder) / "claude").exists()))


def test_with_no_claude_on_path_the_bundled_one_runs_and_the_banner_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    without_claude_on_path(monkeypatch)
    bundled = str(claude_binary())
    assert claude.executable("claude") == bundled
    assert claude.executable("/opt/claude/bin/claude") == "/opt/claude/bin/claude", "AGENT_EXECUTABLE as it is"
    line = agent_line(Settings(agent_driver="claude", agent_args_line="--model opus"))
    assert line == f"the claude driver: {bundled} --model opus (AGENT)"


def test_a_claude_on_path_comes_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    own = tmp_path / "claude"
    own.write_text("#!/bin/sh\n")
    own.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    assert claude.executable("claude") == "claude"
    assert agent_line(Settings(agent_driver="claude")) == f"the claude driver: {own} (AGENT)"


def test_with_no_claude_anywhere_the_banner_says_how_to_get_one(monkeypatch: pytest.MonkeyPatch) -> None:
    without_claude_on_path(monkeypatch)
    monkeypatch.setattr(claude, "bundled_claude", lambda: None)
    line = agent_line(Settings(agent_driver="claude"))
    assert line.startswith("the claude driver, but `claude` (AGENT) was not found: install Claude Code"), line
    assert "AGENT_EXECUTABLE" in line
