"""The agent drivers, by the name `AGENT` gives them."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Callable

from activities.runs.agents import aider, claude, codex, command
from activities.runs.agents.base import Invocation, Reader, RelayMaker, Turn
from activities.runs.agents.claude_permissions import PermissionRelay
from activities.runs.agents.codex_app_server import AppServerRelay


@dataclass(frozen=True)
class Driver:
    name: str
    invocation: Callable[[list[str], Turn], Invocation]
    reader: Callable[[Path | None], Reader]
    streams_events: bool  # its output is read into progress lines and a final answer (else passed on as it is)
    names_sessions: bool  # the agent gives the session id (else the service makes one)
    relay: RelayMaker | None = None  # the agent can ask its people (docs/approvals.md)


def _driver(name: str, module: ModuleType, streams_events: bool, names_sessions: bool,
            relay: RelayMaker | None = None) -> Driver:
    return Driver(name, module.invocation, module.Reader, streams_events, names_sessions, relay)


DRIVERS = {
    "claude": _driver("claude", claude, True, True, PermissionRelay),
    "codex": _driver("codex", codex, True, True, AppServerRelay),
    "aider": _driver("aider", aider, True, False),
    "command": _driver("command", command, False, False),
}

# The small agent of examples/: `isolator dev` drives it as Claude Code is when no agent was chosen, so
# that a message gets an answer with nothing else installed.
EXAMPLE_AGENT = Path(__file__).resolve().parents[3] / "examples" / "agent.py"

# How to get each named agent, for the banner of `isolator dev` when its program is nowhere.
HOW_TO_GET = {
    "claude": "install Claude Code (`npm install -g @anthropic-ai/claude-code`) or run `make install`, whose "
              "claude-agent-sdk package bundles it",
    "codex": "install Codex (`npm install -g @openai/codex`)",
    "aider": "install Aider (`pipx install aider-chat`)",
}


def program_path(driver: str, program: str) -> str | None:
    """Where the program a run of the driver starts is (`claude`: on PATH, else the bundled one); None: nowhere."""
    return shutil.which(claude.executable(program) if driver == "claude" else program)


def agent_name(driver: str, executable: str | None) -> str:
    """The agent as a person calls it: the driver's name, except for the example agent (whose driver is
    Claude Code's, though no Claude answers)."""
    return "the example agent" if executable == str(EXAMPLE_AGENT) else driver
