"""Codex through its app-server protocol, when approvals are on (docs/approvals.md): `codex exec` cannot
ask anyone, `codex app-server` asks its client about each command and patch.

The protocol is JSON-RPC over standard input and output, one message a line. The run opens it
(`initialize`, then `thread/start`, or `thread/resume` of the conversation's thread), starts a turn with
the message once the thread is there, and answers each approval request at once from the rules, as
Claude Code's are answered (activities/runs/agents/claude_permissions.py): `accept`, `decline` (a deny
rule), or, when a person must answer, `cancel`, which ends the turn without the call. The relay keeps
that call; the run records it and the environment's workflow waits for the answer, holding no process.
Standard input is closed once the turn has completed, and Codex exits.

Codex asks about every command and patch (`untrusted`), so that the rules decide, not its own list of
safe commands; its notifications are read as the `codex exec --json` events they stand for
(activities/runs/agents/codex.py reads both).
"""

from __future__ import annotations

import asyncio
import json
import re
import shlex
from typing import Any

from isolator.approval_rules import ApprovalRules, verdict
from isolator.contracts.approvals import AllowedCalls, ApprovalKind, ToolCall

INITIALIZE, THREAD, TURN = 0, 1, 2  # the ids of the run's own requests
ASK_ABOUT_EVERYTHING = "untrusted"
NOT_ANSWERED = -32601  # JSON-RPC's "method not found": a request of Codex's that is no approval
# `codex app-server` takes `-c` settings, not exec's flags: those of AGENT_ARGS become settings.
FLAG_SETTINGS = {"-m": "model", "--model": "model", "-p": "profile", "--profile": "profile",
                 "-s": "sandbox_mode", "--sandbox": "sandbox_mode"}
CHANGE_TOOLS = {"add": "Write"}  # what a patch does to a file, as the rules name it: else `Edit`


class AppServerRelay:
    def __init__(self, rules: ApprovalRules, allowed: AllowedCalls, worktree: str) -> None:
        self.rules = rules
        self.allowed = allowed
        self.worktree = worktree
        self.asked: ToolCall | None = None  # the first call a person must answer; the turn ended there
        self._message = ""
        self._changes: dict[str, list[dict]] = {}  # each patch's files, by its item id, until Codex asks about it
        self._lines: asyncio.Queue[bytes | None] = asyncio.Queue()

    @property
    def kind(self) -> ApprovalKind:
        return "tool"

    async def converse(self, message: str, thread_id: str | None, stdin: asyncio.StreamWriter) -> None:
        """The program's standard input: the protocol's opening, the thread, then the turn and each answer."""
        self._message = message
        # Asked about everything, whatever its configuration says; its sandbox is its configuration's.
        policy = {"approvalPolicy": ASK_ABOUT_EVERYTHING}
        thread = {"id": THREAD, "method": "thread/resume", "params": {"threadId": thread_id, **policy}} if thread_id \
            else {"id": THREAD, "method": "thread/start", "params": {"cwd": self.worktree, **policy}}
        for opening in ({"id": INITIALIZE, "method": "initialize", "params": {"clientInfo": {"name": "isolator",
                                                                                            "version": "1"}}},
                        {"method": "initialized"}, thread):
            stdin.write(_line(opening))
        await stdin.drain()
        while (line := await self._lines.get()) is not None:
            stdin.write(line)
            await stdin.drain()

    def on_event(self, event: dict[str, Any]) -> None:
        """Every message of Codex's: its requests are answered, the thread's arrival starts the turn, the
        turn's end (or a request of ours refused) closes the conversation."""
        method, params = event.get("method"), event.get("params") or {}
        if method is not None and "id" in event:
            self._answer(event["id"], str(method), params)
        elif event.get("id") == THREAD and "result" in event:
            thread = (event["result"].get("thread") or {}).get("id")
            self._lines.put_nowait(_line({"id": TURN, "method": "turn/start", "params": {
                "threadId": thread, "input": [{"type": "text", "text": self._message}]}}))
        elif ("error" in event and method is None) or method == "turn/completed":
            self._lines.put_nowait(None)
        elif method == "item/started" and (params.get("item") or {}).get("type") == "fileChange":
            self._changes[str(params["item"].get("id", ""))] = params["item"].get("changes") or []

    def _answer(self, request_id: object, method: str, params: dict[str, Any]) -> None:
        item = str(params.get("itemId", ""))
        if method == "item/commandExecution/requestApproval":
            calls = [ToolCall("Bash", {"command": unwrapped(str(params.get("command") or ""))}, item)]
        elif method == "item/fileChange/requestApproval":
            calls = [_file_call(change, item) for change in self._changes.pop(item, [])]
        else:  # questions, an MCP server's, sign-ins: nobody here answers those
            self._lines.put_nowait(_line({"id": request_id, "error": {
                "code": NOT_ANSWERED, "message": f"isolator answers approvals only, not {method}"}}))
            return
        self._lines.put_nowait(_line({"id": request_id, "result": {"decision": self._decision(calls)}}))

    def _decision(self, calls: list[ToolCall]) -> str:
        """Deny wins; a call a person must answer ends the turn; a patch whose files are not known is declined."""
        verdicts = [verdict(call, self.rules, self.allowed, self.worktree) for call in calls]
        if not calls or "deny" in verdicts:
            return "decline"
        if "ask" in verdicts:
            self.asked = self.asked or calls[verdicts.index("ask")]
            return "cancel"
        return "accept"


def app_server_args(args: list[str]) -> list[str]:
    """AGENT_ARGS, written for `codex exec`, as `codex app-server` takes them: a model, a profile and a
    sandbox as `-c` settings; anything else as it is (Codex says what it does not take)."""
    taken: list[str] = []
    words = iter(args)
    for word in words:
        flag, given, value = word.partition("=")
        if flag in FLAG_SETTINGS:
            taken += ["-c", f"{FLAG_SETTINGS[flag]}={json.dumps(value if given else next(words, ''))}"]
        else:
            taken.append(word)
    return taken


def exec_events(event: dict[str, Any]) -> list[dict[str, Any]]:
    """An app-server message as the `codex exec --json` events it stands for; none for the rest."""
    method, params = event.get("method"), event.get("params") or {}
    thread = ((event.get("result") or {}).get("thread") or {}).get("id")
    if thread:  # the answer to thread/start or thread/resume
        return [{"type": "thread.started", "thread_id": thread}]
    if "error" in event and method is None:  # a request of ours refused: a thread it no longer has
        return [{"type": "turn.failed", "error": {"message": str(event["error"].get("message", ""))}}]
    if method == "item/completed":
        item = _exec_item(params.get("item") or {})
        return [{"type": "item.completed", "item": item}] if item else []
    if method == "thread/tokenUsage/updated":  # the thread's, as exec reports it at the turn's end
        total = (params.get("tokenUsage") or {}).get("total") or {}
        return [{"type": "turn.completed", "usage": {"input_tokens": total.get("inputTokens"),
                                                     "cached_input_tokens": total.get("cachedInputTokens"),
                                                     "output_tokens": total.get("outputTokens")}}]
    if method == "error":
        return [{"type": "error", "message": str((params.get("error") or {}).get("message", ""))}]
    turn = params.get("turn") or {}
    if method == "turn/completed" and turn.get("status") == "failed":
        return [{"type": "turn.failed", "error": {"message": str((turn.get("error") or {}).get("message", ""))}}]
    return []


def _exec_item(item: dict[str, Any]) -> dict[str, Any] | None:
    kind = item.get("type")
    if kind == "agentMessage":
        return {"type": "agent_message", "text": item.get("text", "")}
    if kind == "fileChange":
        return {"type": "file_change", "status": item.get("status"), "changes": [
            {"path": change.get("path", ""), "kind": (change.get("kind") or {}).get("type")}
            for change in item.get("changes") or []]}
    if kind == "commandExecution":
        return {"type": "command_execution", "command": item.get("command", ""), "exit_code": item.get("exitCode"),
                "status": item.get("status")}
    return None


def _file_call(change: dict[str, Any], item: str) -> ToolCall:
    """One file of a patch as the call the rules see: a new file is a `Write` of its content, any other
    change an `Edit` with its diff."""
    kind = str((change.get("kind") or {}).get("type", ""))
    tool = CHANGE_TOOLS.get(kind, "Edit")
    body = {"content": change.get("diff", "")} if tool == "Write" else {"diff": change.get("diff", ""), "change": kind}
    return ToolCall(tool, {"file_path": str(change.get("path", "")), **body}, item)


def unwrapped(command: str) -> str:
    """Codex reports a command as its shell runs it (`/bin/bash -lc '…'`): the script it runs, which is what
    the rules read; any other command line as it is."""
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    if len(words) == 3 and re.fullmatch(r"(?:\S*/)?(?:ba|z)?sh", words[0]) and words[1] in ("-c", "-lc"):
        return words[2]
    return command


def _line(message: dict[str, Any]) -> bytes:
    return (json.dumps(message) + "\n").encode()
