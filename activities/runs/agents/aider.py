"""Aider, headless: `aider --message-file F`, standard input closed. It has no session id: its chat and
input history files are the session, kept in the conversation's session folder (outside the
worktree) and replayed on the next turn (`--restore-chat-history`).

It prints plain text, no events: a banner, then the model's reply as it streams (prose, SEARCH/REPLACE
blocks, ```bash blocks), a `Tokens: ...` line, then what it did (`Applied edit to a.py`, `Running
pytest`). The reader turns that into progress lines, the final answer (the reply's prose), usage
and cost, and errors (litellm's exception names). What Aider 0.86 prints is in
tests/test_agent_readers.py, as the real CLI printed it against tests/fakes/chat_completions_api.py.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from activities.git.runner import admin_dir
from activities.runs.agents.base import (AgentError, GaveUp, Invocation, LineReader, SessionLost, Turn, Usage,
                                         last_words, short)
from activities.sandbox.bubblewrap import sandboxed

QUIET = ["--no-pretty", "--no-fancy-input", "--no-auto-commits", "--no-gitignore", "--no-check-update",
         "--no-analytics", "--no-show-release-notes"]
# In the sandbox Aider works autonomously: every question it asks (create a file, run the shell commands
# its model suggests, add their output) meets the closed standard input and takes its default, yes.
# `--yes-always` would not do: it answers no to shell commands. Unconfined (SANDBOX=off) it only edits.
UNCONFINED = ["--yes-always"]
ENV = {  # unless the operator set them
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # litellm's own price list, not a download at every start
    "COLUMNS": "1000",  # its console wraps at 80 columns otherwise, cutting error messages in two
}
# Aider retries a failing model API for about a minute (0.25 s, doubling; and litellm retries each of its
# requests twice more, which no setting of Aider's changes): the reader stops it after this many retries,
# so a failing API ends the run in seconds.
MAX_RETRIES = 1
# Its repository map's cache, the one file it keeps in the worktree: ignored through the repository's
# `info/exclude` (never a tracked .gitignore), so it is no change of the run.
TAGS_CACHE = "/.aider.tags.cache.v*/"

_BANNER_END = re.compile(r"^Repo-map:")  # the banner's last line
_PROMPT = re.compile(r"^(?P<question>[^?\n]*\?) \(Y\)es/\(N\)o[^\]]*\]: ?(?P<rest>.*)$")
_TOKENS = re.compile(r"^Tokens: (?P<sent>[\d.]+[kM]?) sent(?:, (?P<write>[\d.]+[kM]?) cache write)?"
                     r"(?:, (?P<hit>[\d.]+[kM]?) cache hit)?, (?P<received>[\d.]+[kM]?) received\.")
_COST = re.compile(r"Cost: \$[\d.]+ message, \$(?P<session>[\d.]+) session\.")
_ERROR = re.compile(r"^litellm\.(?P<name>\w+):")
AIDERS_OWN = "The API provider"  # how each of Aider's own explanations of an API error begins
_RETRY = re.compile(r"^Retrying in [\d.]+ seconds")


def invocation(program: list[str], turn: Turn) -> Invocation:
    if turn.run_number > 1 and not (turn.session_dir / "chat-history.md").is_file():
        raise SessionLost("the chat history of the session's earlier turns is gone")
    message_file = turn.session_dir / "message.txt"
    message_file.write_text(turn.message)
    exclude_tags_cache(turn.worktree)
    argv = [*program[:1], *QUIET, *([] if sandboxed() else UNCONFINED),
            "--chat-history-file", str(turn.session_dir / "chat-history.md"),
            "--input-history-file", str(turn.session_dir / "input-history"),
            "--llm-history-file", str(turn.session_dir / "llm-history"),
            *(["--restore-chat-history"] if turn.run_number > 1 else []),
            *program[1:], "--message-file", str(message_file)]
    env = {name: value for name, value in ENV.items() if name not in os.environ}
    return Invocation(argv, None, env)


def exclude_tags_cache(worktree: Path) -> None:
    common = _common_git_dir(worktree)
    if common is None:
        return
    exclude = common / "info" / "exclude"
    try:
        known = exclude.read_text() if exclude.is_file() else ""
        if TAGS_CACHE not in known.splitlines():
            exclude.parent.mkdir(parents=True, exist_ok=True)
            exclude.write_text(known + ("" if not known or known.endswith("\n") else "\n") + TAGS_CACHE + "\n")
    except OSError:
        pass  # the cache then shows as a change: no reason to refuse the run


def _common_git_dir(worktree: Path) -> Path | None:
    """`.git` itself, or for a linked worktree the common dir its `gitdir:` admin dir names."""
    if (worktree / ".git").is_dir():
        return worktree / ".git"
    admin = admin_dir(worktree)
    if admin is None:
        return None
    try:
        return (admin / (admin / "commondir").read_text().strip()).resolve()
    except OSError:
        return None


class Reader(LineReader):
    def __init__(self, worktree: Path | None = None) -> None:
        super().__init__()
        self.phase = "banner"  # then "reply" (the model's text streams), then "after" (what Aider did)
        self.banner_seen = False
        self.prose: list[str] = []
        self.pending: str | None = None  # a reply line that may name the file of the block that follows
        self.fenced = False
        self.after_error = False  # the lines that explain an error, until its retry
        self.error_lines: list[str] = []  # the error's name, then its message's lines (while it may go on)
        self.retries = 0
        self.subject = ""  # what Aider's last question was about
        self.new_files: set[str] = set()

    def line(self, line: str) -> list[str]:
        if prompt := _PROMPT.match(line):
            if prompt.group("question").startswith("Create new file"):
                self.new_files.add(self.subject)
            line = prompt.group("rest").strip()
        if error := _ERROR.match(line):
            self.error = classify(error.group("name"), line)
            self.error_lines = [error.group("name"), line]
            self.after_error, self.prose, self.pending, self.fenced = True, [], None, False
            return [f"⚠ {short(line, 200)}"]
        if _RETRY.match(line):
            self.retries += 1
            self.after_error = False
            if self.retries > MAX_RETRIES:
                raise GaveUp(f"gave up after {MAX_RETRIES} retries")
            return []
        if self.after_error:
            # litellm's message, when the console wrapped it, goes on until Aider's own explanation
            # ("The API provider ..."), which does not count: it names every cause it could be.
            if line.startswith(AIDERS_OWN):
                self.error_lines = []
            elif line and self.error_lines and len(self.error_lines) < 6:
                self.error_lines.append(line)
                self.error = classify(self.error_lines[0], " ".join(self.error_lines[1:]))
            return []
        if tokens := _TOKENS.match(line):
            return self._tokens(tokens, line)
        if self.phase == "banner":  # its last line, then notes (a history restored), then a blank line
            self.banner_seen = self.banner_seen or bool(_BANNER_END.match(line))
            if self.banner_seen and not line:
                self.phase = "reply"
            return []
        if self.phase == "reply":
            return self._reply(line)
        return self._after(line)

    def _reply(self, line: str) -> list[str]:
        """The model's text: its prose is shown, its edit and shell blocks (and the file name above one) are not."""
        if line.startswith("```"):
            self.pending, self.fenced = None, not self.fenced  # the line above a block names its file
            return []
        if self.fenced:
            return []
        shown = self._flush()
        self.pending = line
        return shown

    def _flush(self) -> list[str]:
        """The reply line held back is prose."""
        shown, self.pending = self.pending, None
        if shown is None or (not shown and not self.prose):
            return []
        self.prose.append(shown)
        return [shown] if shown else []

    def _tokens(self, tokens: re.Match[str], line: str) -> list[str]:
        shown = []
        if self.phase == "reply":  # the reply has ended
            shown = self._flush()
            self.result = re.sub(r"\n{3,}", "\n\n", "\n".join(self.prose)).strip() or None
        self.phase, self.error = "after", None  # a reply came: any earlier error was retried away
        write, hit = _count(tokens.group("write")), _count(tokens.group("hit"))
        self.usage = Usage(input_tokens=self.usage.input_tokens + _count(tokens.group("sent")) - write,
                           output_tokens=self.usage.output_tokens + _count(tokens.group("received")),
                           cache_read_tokens=self.usage.cache_read_tokens + hit,
                           cache_write_tokens=self.usage.cache_write_tokens + write, cost_usd=self.usage.cost_usd)
        self._cost(line)
        return shown

    def _cost(self, line: str) -> None:
        if cost := _COST.search(line):  # the process's total so far: one process is one run
            self.usage.cost_usd = float(cost.group("session"))

    def _after(self, line: str) -> list[str]:
        if line.startswith("Applied edit to "):
            path = line.removeprefix("Applied edit to ").strip()
            verb = "Wrote" if path in self.new_files else "Edited"
            self.note(f"{verb.lower()} `{path}`")
            return [f"✎ {verb} `{path}`"]
        if line.startswith("Running "):
            command = short(line.removeprefix("Running "), 100)
            self.note(f"ran `{command}`")  # Aider does not tell a command's exit code
            return [f"$ `{command}`"]
        if line.startswith("Cost: "):  # on a line of its own when the cache was both read and written
            self._cost(line)
            return []
        if line:
            self.subject = line
        return []

    def end(self, exit_code: int | None, stderr_tail: list[str]) -> None:
        self.end_lines()
        if self.error is None and exit_code not in (0, None):
            self.error = AgentError("other", last_words(stderr_tail) or f"exit code {exit_code}")


def classify(name: str, line: str) -> AgentError:
    """litellm's exception, by name: the words after it are the model API's own."""
    detail = short(line.split(" - ", 1)[-1] if " - " in line else line, 300)
    if name == "AuthenticationError":
        return AgentError("auth", detail)
    if name == "RateLimitError":
        found = re.search(r"try again in\s+([\w.]+)", line, re.IGNORECASE)
        return AgentError("rate_limit", detail, f"in {found.group(1).rstrip('.')}" if found else None)
    if "overloaded" in line.lower() or name == "ServiceUnavailableError":
        return AgentError("overloaded", detail)
    if name in ("InternalServerError", "APIConnectionError", "APIError", "BadGatewayError", "Timeout"):
        return AgentError("api", detail)
    return AgentError("other", detail)


def _count(text: str | None) -> int:
    if not text:
        return 0
    scale = {"k": 1000, "M": 1_000_000}.get(text[-1], 1)
    return int(float(text.rstrip("kM")) * scale)
