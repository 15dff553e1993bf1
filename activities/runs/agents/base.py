"""What every agent driver gives the run (activities/runs/run_agent.py): how to start one turn of its agent,
and how to read what the agent prints while it works.

A driver is a module with an `invocation` (the command line, standard input and variables of a
turn, new session or resumed) and a `Reader` (fed the agent's output as it arrives, it keeps the
lines worth showing, the final answer, the session id, usage and cost, and a known error). An agent
that can ask its people (docs/approvals.md) also has a `Relay`, which answers its requests in the run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal, Protocol

from activities.sandbox.egress_proxy import Refusal
from activities.sandbox.user_programs import Feed
from isolator.approval_rules import ApprovalRules
from isolator.contracts.approvals import AllowedCalls, ApprovalKind, ToolCall

# What went wrong, in the terms of the person using the agent; "session" is handled by the run
# (one more try in a new session) and never reaches them.
ErrorKind = Literal["auth", "rate_limit", "overloaded", "api", "refused", "turn_limit", "budget", "session", "other"]


@dataclass
class Turn:
    """One message for the agent: where, and within which session."""

    message: str
    worktree: Path
    session_id: str | None  # the session to resume; None: a new one
    session_dir: Path  # the conversation's folder outside the worktree, kept between its runs
    run_number: int  # 1 for a new session's first turn
    max_cost_usd: float | None = None
    relay: Relay | None = None  # answers the agent's permission requests in the run


class Relay(Protocol):
    """Answers an agent's permission requests inside its run, from the rules (docs/approvals.md), and keeps
    the first call a person must answer: the agent's turn ends there, and the run records it. Its reader
    hands it every event of the agent's (Claude Code: activities/runs/agents/claude_permissions.py; Codex:
    activities/runs/agents/codex_app_server.py)."""

    rules: ApprovalRules
    asked: ToolCall | None

    @property
    def kind(self) -> ApprovalKind: ...

    def on_event(self, event: dict[str, Any]) -> None: ...


# A driver's relay, made for each call of its agent from the rules, what people allowed, and the worktree.
RelayMaker = Callable[[ApprovalRules, AllowedCalls, str], Relay]


@dataclass
class Invocation:
    argv: list[str]
    stdin: bytes | Feed | None  # None: standard input is closed at once; a Feed converses with the agent
    env: dict[str, str] = field(default_factory=dict)
    session_id: str | None = None  # known before the agent says it (the command driver's own ids)


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float | None = None  # when the agent reports money

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_write_tokens


class SessionLost(Exception):
    """The agent's own record of the session is gone (its files cleared): before anything runs, the
    run starts a new session instead, and says so."""


@dataclass
class AgentError:
    kind: ErrorKind
    detail: str  # the agent's own words
    resets: str | None = None  # when a usage limit renews, as the agent said it


class Reader(Protocol):
    """Fed the agent's standard output; all fields final once `end` has been called."""

    session_id: str | None
    result: str | None  # the final answer; None for plain-text agents, whose whole output is the answer
    usage: Usage
    error: AgentError | None
    did: list[str]  # a compact list of what it did: files written, commands run

    def feed(self, text: str) -> list[str]:
        """Output as it arrives; the lines to show in the conversation now (plain text is passed on whole)."""
        ...

    def end(self, exit_code: int | None, stderr_tail: list[str]) -> None:
        """The agent exited: what is left of its output, and what its standard error says."""
        ...


class LineReader:
    """The common part of the readers of JSON event streams: whole lines, one event each."""

    def __init__(self) -> None:
        self.partial = ""
        self.session_id: str | None = None
        self.result: str | None = None
        self.usage = Usage()
        self.error: AgentError | None = None
        self.did: list[str] = []
        self.refused: list[Refusal] = []  # what the sandbox refused it more than once (activities/runs/refusals.py)

    def feed(self, text: str) -> list[str]:
        *lines, self.partial = (self.partial + text).split("\n")
        shown: list[str] = []
        for line in lines:
            shown.extend(self.line(line.strip()))
        return shown

    def line(self, line: str) -> list[str]:
        raise NotImplementedError

    def end_lines(self) -> None:
        if self.partial.strip():
            self.line(self.partial.strip())
        self.partial = ""

    def note(self, action: str) -> None:
        """One entry of the compact list, once."""
        if action not in self.did:
            self.did.append(action)


class GaveUp(Exception):
    """Raised by a reader that has read enough (an agent retrying a failing API for minutes): the agent
    is stopped, and the reader's error ends the run."""


def short(text: str, limit: int = 120) -> str:
    """One line of at most `limit` characters."""
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


# Rust's panic (Codex is Rust): `thread 'main' panicked at src/x.rs:1:2:` then the message on its own
# lines (Rust 1.73 on), or `panicked at 'message', src/x.rs:1:2` (before); a backtrace may follow.
_PANIC = re.compile(r"thread '[^']*' panicked at (?P<rest>.*)$")
_OLD_PANIC = re.compile(r"'(?P<message>.*)', \S+:\d+:\d+$")
# What follows a message, never its words: a backtrace's header and frames (`13: <unknown>`,
# `2: 0x55d1 - main`, `at src/x.rs:1:2`), Rust's notes. A numbered cause (`0: no such file`) is words.
_NOT_WORDS = re.compile(r"^\s*(?:stack backtrace:|note: |\d+: (?:<unknown>|0x[0-9a-f]+|[\w<>]+::)|at \S+:\d+)",
                        re.IGNORECASE)


def last_words(stderr_lines: list[str]) -> str:
    """What a failed agent said of its failure: a panic's message, else its last line that is no
    backtrace frame; empty when it said nothing."""
    for index, line in enumerate(stderr_lines):
        if found := _PANIC.search(line):
            old = _OLD_PANIC.match(found.group("rest"))
            message = [old.group("message")] if old else []
            for after in stderr_lines[index + 1:] if not old else []:
                if not after.strip() or _NOT_WORDS.match(after):
                    break
                message.append(after.strip())
            return short("it crashed: " + (" ".join(message) or found.group("rest")), 300)
    words = [line for line in stderr_lines if line.strip() and not _NOT_WORDS.match(line)]
    return short(words[-1], 300) if words else ""


def relative(path: str, worktree: Path | None) -> str:
    """A path as the user knows it: relative to the worktree when inside it."""
    if worktree is not None:
        try:
            return str(Path(path).relative_to(worktree))
        except ValueError:
            pass
    return path
