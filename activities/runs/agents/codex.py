"""Codex CLI, headless: `codex exec --json <message>`, then `codex exec --json resume <thread id>
<message>`, with standard input closed (on an open pipe it waits for it forever); its JSON events
read into progress lines, the final answer, the thread id, tokens (it reports no money) and errors.
When approvals are on, `codex app-server` instead, which can ask (activities/runs/agents/codex_app_server.py);
its messages are read as the same events."""

from __future__ import annotations

import json
import re
from functools import partial
from pathlib import Path

from activities.runs.agents.base import (AgentError, GaveUp, Invocation, LineReader, Turn, Usage, last_words,
                                         relative, short)
from activities.runs.agents.codex_app_server import AppServerRelay, app_server_args, exec_events, unwrapped
from activities.sandbox.bubblewrap import sandboxed

# Codex's own sandbox (bubblewrap, in a user namespace of its own) cannot start inside isolator's, where no
# program may make one ("bwrap: setting up uid map: Operation not permitted"): with its users' usual
# `sandbox_mode = "workspace-write"` every write ("Failed to write file") and command would fail. In
# isolator's sandbox, which is what keeps it to its worktree, it runs without its own, as Claude Code runs
# in bypassPermissions; AGENT_ARGS come after and win. Unconfined (SANDBOX=off) its own settings apply.
OWN_SANDBOX_OFF = ["-c", 'sandbox_mode="danger-full-access"']
UNKNOWN_SESSION = "no rollout found"
CHANGE_KINDS = {"add": "Wrote", "update": "Edited", "delete": "Deleted"}


def invocation(program: list[str], turn: Turn) -> Invocation:
    # Options (a model, `-c` settings) are not remembered by a resumed thread: given on every turn.
    own_sandbox = OWN_SANDBOX_OFF if sandboxed() else []
    if isinstance(turn.relay, AppServerRelay) and turn.relay.rules.active:  # a rule may need a person's yes
        return Invocation([program[0], "app-server", *own_sandbox, *app_server_args(program[1:])],
                          partial(turn.relay.converse, turn.message, turn.session_id))
    argv = [*program[:1], "exec", "--json", *own_sandbox, *program[1:]]
    if turn.session_id:
        argv += ["resume", turn.session_id]
    # Its sessions and logs go to CODEX_HOME, its conversation's folder (activities/runs/agents/configs.py).
    return Invocation([*argv, "--", turn.message], None)


class Reader(LineReader):
    def __init__(self, worktree: Path | None = None) -> None:
        super().__init__()
        self.worktree = worktree
        # Codex reports the thread's usage so far; the run's own is what it added to `baseline`,
        # the thread's usage as the previous turn left it.
        self.baseline = Usage()
        self.thread_usage = Usage()
        self.relay: AppServerRelay | None = None  # answers app-server's requests, when approvals are on

    def line(self, line: str) -> list[str]:
        try:
            event = json.loads(line)
        except ValueError:
            return [short(line, 300)] if line else []
        if not isinstance(event, dict):
            return []
        if "type" not in event and ("method" in event or "id" in event):  # app-server's JSON-RPC
            if self.relay is not None:
                self.relay.on_event(event)
            return [shown for translated in exec_events(event) for shown in self._event(translated)]
        return self._event(event)

    def _event(self, event: dict) -> list[str]:
        kind = event.get("type")
        if kind == "thread.started":
            self.session_id = event.get("thread_id") or self.session_id
        elif kind == "item.completed":
            return self._item(event.get("item") or {})
        elif kind == "turn.completed":
            usage = event.get("usage") or {}
            cached = int(usage.get("cached_input_tokens") or 0)
            self.thread_usage = Usage(input_tokens=int(usage.get("input_tokens") or 0) - cached,
                                      output_tokens=int(usage.get("output_tokens") or 0), cache_read_tokens=cached)
            base = self.baseline if self.thread_usage.total_tokens >= self.baseline.total_tokens else Usage()
            self.usage = Usage(
                input_tokens=max(self.thread_usage.input_tokens - base.input_tokens, 0),
                output_tokens=max(self.thread_usage.output_tokens - base.output_tokens, 0),
                cache_read_tokens=max(self.thread_usage.cache_read_tokens - base.cache_read_tokens, 0),
            )
        elif kind == "turn.failed":
            self.error = classify(str((event.get("error") or {}).get("message") or "the turn failed"))
        elif kind == "error":
            error = classify(str(event.get("message") or "error"))
            if error.kind == "api" and self.refused:
                # It reconnects to what the sandbox refuses, for minutes if its retries allow: no retry can help.
                refused = self.refused[-1]
                self.error = AgentError("refused", f"`{refused.host}:{refused.port}` ({refused.reason})")
                raise GaveUp(error.detail)
            self.error = self.error or error
        return []

    def _item(self, item: dict) -> list[str]:
        kind = item.get("type")
        if kind == "agent_message" and str(item.get("text", "")).strip():
            self.result = item["text"].strip()
            return [self.result]
        if kind == "file_change":
            shown = []
            for change in item.get("changes") or []:
                verb = CHANGE_KINDS.get(change.get("kind"), "Changed")
                path = relative(str(change.get("path", "")), self.worktree)
                if item.get("status") in ("failed", "declined"):
                    shown.append(f"✗ `{path}` not {verb.lower()}: {item['status']}")
                    continue
                shown.append(f"✎ {verb} `{path}`")
                self.note(f"{verb.lower()} `{path}`")
            return shown
        if kind == "command_execution":
            command = short(unwrapped(str(item.get("command", ""))), 100)
            exit_code = item.get("exit_code")
            if item.get("status") == "declined":
                return [f"✗ `{command}` not run: declined"]
            if exit_code is None:
                return [f"✗ `{command}` did not finish"]
            self.note(f"ran `{command}` (exit {exit_code})")
            return [f"$ `{command}` → exit {exit_code}"]
        if kind == "error" and item.get("message"):
            return [f"⚠ {short(item['message'], 200)}"]
        return []  # reasoning, todo lists, tool internals

    def end(self, exit_code: int | None, stderr_tail: list[str]) -> None:
        self.end_lines()
        stderr = "\n".join(stderr_tail)
        if UNKNOWN_SESSION in stderr.lower():
            self.error = AgentError("session", UNKNOWN_SESSION)
        elif self.error is None and exit_code not in (0, None):
            self.error = classify(last_words(stderr_tail) or f"exit code {exit_code}")


def classify(message: str) -> AgentError:
    lowered = message.lower()
    detail = short(message, 300)
    if UNKNOWN_SESSION in lowered or ("rollout" in lowered and "not found" in lowered):
        return AgentError("session", detail)
    if "401" in message or "unauthorized" in lowered or "api key" in lowered:
        return AgentError("auth", detail)
    if "429" in message or "usage limit" in lowered or "quota" in lowered or "rate limit" in lowered:
        found = re.search(r"(?:try again|resets?)\s+((?:at|in)\s+[^.\n]{1,60})", message, re.IGNORECASE)
        return AgentError("rate_limit", detail, found.group(1).strip() if found else None)
    if "529" in message or "overloaded" in lowered or "503" in message:
        return AgentError("overloaded", detail)
    if re.search(r"\b5\d\d\b", message) or any(
            words in lowered for words in ("stream disconnected", "connection", "high demand", "server error")):
        return AgentError("api", detail)
    return AgentError("other", detail)
