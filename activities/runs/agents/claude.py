"""Claude Code, headless: `claude -p --output-format stream-json --verbose`, the message on standard
input, `--resume <session id>` on later turns; its stream of JSON events read into progress lines,
the final answer, the session id, usage, cost and errors."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
from functools import partial
from pathlib import Path

from activities.runs.agents.base import (AgentError, Invocation, LineReader, Turn, Usage, last_words,
                                         relative, short)
from activities.runs.agents.claude_permissions import PermissionRelay
from activities.sandbox.bubblewrap import sandboxed
from activities.sandbox.user_programs import Feed

# The one place the permission mode is chosen. In the sandbox, which tells it so (IS_SANDBOX=1), it works
# autonomously (`bypassPermissions`): it can run the project's tests without asking, and the sandbox is
# what keeps it to its worktree. Unconfined (SANDBOX=off) it only edits (`acceptEdits`); shell commands
# then need `AGENT_ARGS='--allowedTools=Bash'`. AGENT_ARGS come after it and win.
SANDBOXED_MODE, UNCONFINED_MODE = "bypassPermissions", "acceptEdits"
# Claude Code retries a failing API for minutes by default; the run is bounded unless the operator chose.
DEFAULT_MAX_RETRIES = "2"
UNKNOWN_SESSION = "No conversation found with session ID"
EDIT_TOOLS = {"Write": "Wrote", "Edit": "Edited", "MultiEdit": "Edited", "NotebookEdit": "Edited"}


def invocation(program: list[str], turn: Turn) -> Invocation:
    mode = SANDBOXED_MODE if sandboxed() else UNCONFINED_MODE
    argv = [executable(program[0]), "-p", "--output-format", "stream-json", "--verbose", "--permission-mode", mode]
    if turn.session_id:
        argv += ["--resume", turn.session_id]
    if turn.max_cost_usd is not None:
        argv += ["--max-budget-usd", f"{turn.max_cost_usd:g}"]
    env = {}
    if "CLAUDE_CODE_MAX_RETRIES" not in os.environ:
        env["CLAUDE_CODE_MAX_RETRIES"] = DEFAULT_MAX_RETRIES
    stdin: bytes | Feed = turn.message.encode()
    if (relay := turn.relay) is not None:  # its permission prompts and questions come to the run
        argv += ["--input-format", "stream-json", "--permission-prompt-tool", "stdio"]
        if relay.rules.active:
            argv += ["--settings", relay.settings()]
        stdin = partial(relay.converse, turn.message)
    return Invocation([*argv, *program[1:]], stdin, env)


def executable(program: str) -> str:
    """`claude` on PATH, else the Claude Code that the claude-agent-sdk package bundles (`make dev`
    installs it); any other program (AGENT_EXECUTABLE) as it is."""
    if program != "claude" or shutil.which(program):
        return program
    bundled = bundled_claude()
    return str(bundled) if bundled is not None else program


def bundled_claude() -> Path | None:
    spec = importlib.util.find_spec("claude_agent_sdk")  # found, not imported: the run needs only its binary
    if spec is None or spec.origin is None:
        return None
    binary = Path(spec.origin).parent / "_bundled" / "claude"
    return binary if binary.is_file() else None


class Reader(LineReader):
    def __init__(self, worktree: Path | None = None) -> None:
        super().__init__()
        self.worktree = worktree
        self.tools: dict[str, tuple[str, dict]] = {}  # tool_use id -> (name, input), until its result
        self.relay: PermissionRelay | None = None  # answers its permission prompts, when the run has one

    def line(self, line: str) -> list[str]:
        try:
            event = json.loads(line)
        except ValueError:
            return [short(line, 300)] if line else []  # not an event: shown as it is
        if not isinstance(event, dict):
            return []
        self.session_id = event.get("session_id") or self.session_id
        kind = event.get("type")
        if self.relay is not None:
            self.relay.on_event(event)
        if kind == "assistant":
            return self._assistant(event.get("message") or {})
        if kind == "user":
            return self._results(event.get("message") or {})
        if kind == "result":
            self._result(event)
        if kind == "system" and event.get("subtype") == "api_retry":
            return [f"⚠ The model API answered {event.get('error_status') or event.get('error')}; "
                    f"retry {event.get('attempt')} of {event.get('max_retries')}…"]
        return []

    def _assistant(self, message: dict) -> list[str]:
        shown = []
        for block in message.get("content") or []:
            if block.get("type") == "text" and block.get("text", "").strip():
                shown.append(block["text"].strip())
            elif block.get("type") == "tool_use":
                self.tools[block.get("id", "")] = (block.get("name", ""), block.get("input") or {})
        return shown

    def _results(self, message: dict) -> list[str]:
        content = message.get("content")
        shown = []
        for block in content if isinstance(content, list) else []:
            if block.get("type") != "tool_result" or block.get("tool_use_id") not in self.tools:
                continue
            name, given = self.tools.pop(block["tool_use_id"])
            text = _text_of(block.get("content"))
            failed = bool(block.get("is_error"))
            if self._held(block["tool_use_id"]):
                # The relay's interrupt, which Claude Code words as a person's refusal: the call waits instead.
                subject = short(given.get("command") or relative(given.get("file_path") or "", self.worktree), 100)
                call = f"`{subject}`" if name == "Bash" else f"{name} `{subject}`" if subject else f"`{name}`"
                shown.append(f"⏸ {call} waits for a person's answer")
            elif name in EDIT_TOOLS and given.get("file_path"):
                path = relative(given["file_path"], self.worktree)
                if failed:
                    shown.append(f"✗ {name} `{path}` refused: {short(text, 100)}")
                else:
                    shown.append(f"✎ {EDIT_TOOLS[name]} `{path}`")
                    self.note(f"{EDIT_TOOLS[name].lower()} `{path}`")
            elif name == "Bash" and given.get("command"):
                command = short(given["command"], 100)
                exit_code = _exit_code(text) if failed else 0
                if exit_code is None:  # refused or interrupted: it never ran
                    shown.append(f"✗ `{command}` not run: {short(text, 100)}")
                else:
                    shown.append(f"$ `{command}` → exit {exit_code}")
                    self.note(f"ran `{command}` (exit {exit_code})")
        return shown

    @property
    def _paused(self) -> bool:
        """The relay holds a call for a person (docs/approvals.md): the turn ends at its interrupt."""
        return self.relay is not None and self.relay.asked is not None

    def _held(self, tool_use_id: str) -> bool:
        return self._paused and self.relay.asked.tool_use_id == tool_use_id  # type: ignore[union-attr]

    def _result(self, event: dict) -> None:
        usage = event.get("usage") or {}
        self.usage = Usage(
            input_tokens=int(usage.get("input_tokens") or 0), output_tokens=int(usage.get("output_tokens") or 0),
            cache_read_tokens=int(usage.get("cache_read_input_tokens") or 0),
            cache_write_tokens=int(usage.get("cache_creation_input_tokens") or 0),
            cost_usd=float(event["total_cost_usd"]) if event.get("total_cost_usd") is not None else None,
        )
        if self._paused:
            return  # whatever the CLI calls this end (an error, with its diagnostics), it is a pause: no answer
        if isinstance(event.get("result"), str):
            self.result = event["result"]
        subtype = event.get("subtype") or ""
        # An API error ends with `is_error` while `subtype` still says "success": both are read.
        if event.get("is_error") or subtype.startswith("error"):
            self.error = _error(subtype, event.get("api_error_status"), self.result or "")

    def end(self, exit_code: int | None, stderr_tail: list[str]) -> None:
        self.end_lines()
        stderr = "\n".join(stderr_tail)
        if UNKNOWN_SESSION in stderr or UNKNOWN_SESSION in (self.result or ""):
            self.error = AgentError("session", UNKNOWN_SESSION)
        elif self.error is None and exit_code not in (0, None) and self.result is None and not self._paused:
            self.error = AgentError("other", last_words(stderr_tail) or f"exit code {exit_code}")


def _error(subtype: str, status: object, text: str) -> AgentError:
    detail = short(text, 300) or subtype
    if subtype == "error_max_turns":
        return AgentError("turn_limit", detail)
    if "budget" in subtype:
        return AgentError("budget", detail)
    code = status if isinstance(status, int) else _status_in(text)
    if code == 401 or "invalid api key" in text.lower() or "/login" in text:
        return AgentError("auth", detail)
    if code == 429 or "usage limit" in text.lower() or "rate limit" in text.lower():
        return AgentError("rate_limit", detail, _reset_time(text))
    if code == 529 or "overloaded" in text.lower():
        return AgentError("overloaded", detail)
    if code is not None or "api error" in text.lower() or "connection" in text.lower():
        return AgentError("api", detail)
    return AgentError("other", detail)


def _status_in(text: str) -> int | None:
    found = re.search(r"\b(?:API Error|status)[: ]+(\d{3})\b", text, re.IGNORECASE)
    return int(found.group(1)) if found else None


def _reset_time(text: str) -> str | None:
    found = re.search(r"(?:resets?|try again)\s+((?:at|in)\s+[^.|\n]{1,60})", text, re.IGNORECASE)
    return found.group(1).strip() if found else None


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def _exit_code(text: str) -> int | None:
    found = re.match(r"\s*Exit code (\d+)", text)
    return int(found.group(1)) if found else None
