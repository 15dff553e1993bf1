"""Which program a named agent's run starts and which folders of its own it may write (issue "First
hour", 2 and 3), and what a crashed agent said: a panic's message, never a backtrace frame."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from activities.runs.agents import claude, codex
from activities.runs.agents.base import last_words
from activities.runs.agents.configs import agent_folder
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


def test_an_agents_folder_is_its_conversations_with_the_operators_files_read_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home, session = tmp_path / "agent-home", tmp_path / "session"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text("model = 'x'\n")
    monkeypatch.delenv("CODEX_HOME", raising=False)
    folder = agent_folder("codex", session, home, sandboxed=True)
    assert folder.env == {"CODEX_HOME": str(session / "codex")} and folder.writable == [session / "codex"]
    assert folder.config_files == {session / "codex" / "config.toml": home / ".codex" / "config.toml"}

    operators = tmp_path / "operators-claude"
    operators.mkdir()
    (operators / "settings.json").write_text("{}")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(operators))
    unconfined = agent_folder("claude", session, home, sandboxed=False)
    assert unconfined.env == {"CLAUDE_CONFIG_DIR": str(session / "claude")} and unconfined.config_files == {}
    assert (session / "claude" / "settings.json").resolve() == operators / "settings.json", "SANDBOX=off: a link"
    assert agent_folder("command", session, home, sandboxed=True).env == {}


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
