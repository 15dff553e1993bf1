"""Claude Code's permission prompts, answered inside the run (`--permission-prompt-tool stdio`, the
protocol of the SDK's `can_use_tool`, spoken on the agent's standard input and output).

The run writes the message as a stream-json `user` event and keeps standard input open. Claude Code
asks about each call an `ask` rule names (it is given those rules in `--settings`) and about every
question it puts to its person (AskUserQuestion, ExitPlanMode). The relay answers at once from the
rules: allowed, denied, or, when a person must answer, denied with `interrupt` so that the turn ends
without the call. It keeps that call: the run records it and the environment's workflow waits for the
answer, holding no process (docs/approvals.md). Standard input is closed at the turn's `result`.

A call Claude Code asks about because a rule matched is never allowed by the relay alone, only by what a
person allowed: the two read a command line each their own way, and the relay must not be the weaker.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from isolator.approval_rules import ApprovalRules, Rule, verdict
from isolator.contracts.approvals import AllowedCalls, ApprovalKind, ToolCall

WAITING = ("A person must answer this first: the request is in the conversation, and this session "
           "resumes with the answer. Stop here.")


class PermissionRelay:
    def __init__(self, rules: ApprovalRules, allowed: AllowedCalls, worktree: str) -> None:
        self.rules = rules
        self.allowed = allowed
        self.worktree = worktree
        self.asked: ToolCall | None = None  # the first call a person must answer; the turn ended there
        self._inputs: dict[str, dict] = {}  # each tool_use's input as the model gave it, by its id
        self._lines: asyncio.Queue[bytes | None] = asyncio.Queue()

    @property
    def kind(self) -> ApprovalKind:
        assert self.asked is not None
        return {"AskUserQuestion": "question", "ExitPlanMode": "plan"}.get(self.asked.tool_name, "tool")  # type: ignore[return-value]

    def settings(self) -> str:
        """Claude Code's `--settings`: the calls to ask about (deny rules are refused by it outright)."""
        permissions = {"ask": claude_code_rules(self.rules.ask), "deny": claude_code_rules(self.rules.deny)}
        return json.dumps({"permissions": {name: rules for name, rules in permissions.items() if rules}})

    async def converse(self, message: str, stdin: asyncio.StreamWriter) -> None:
        """The program's standard input: the protocol's opening, the message, then each answer."""
        stdin.write(_line({"type": "control_request", "request_id": "isolator-init",
                           "request": {"subtype": "initialize", "hooks": None}}))
        stdin.write(_line({"type": "user", "message": {"role": "user", "content": message},
                           "parent_tool_use_id": None, "session_id": ""}))
        await stdin.drain()
        while (line := await self._lines.get()) is not None:
            stdin.write(line)
            await stdin.drain()

    def on_event(self, event: dict[str, Any]) -> None:
        """Every event of Claude Code's output: its permission requests are answered, its turn's end
        closes the conversation."""
        kind = event.get("type")
        if kind == "assistant":
            for block in (event.get("message") or {}).get("content") or []:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    self._inputs[str(block.get("id", ""))] = block.get("input") or {}
        elif kind == "result":
            self._lines.put_nowait(None)
        elif kind == "control_request" and (event.get("request") or {}).get("subtype") == "can_use_tool":
            self._answer(str(event.get("request_id", "")), event["request"])

    def _answer(self, request_id: str, request: dict[str, Any]) -> None:
        tool_use_id = str(request.get("tool_use_id", ""))
        # ExitPlanMode is asked with an empty input: its plan is in the call the model made.
        given = request.get("input") or self._inputs.get(tool_use_id, {})
        call = ToolCall(str(request.get("tool_name", "")), given, tool_use_id,
                        _suggested_rule(request.get("permission_suggestions")))
        decided = verdict(call, self.rules, self.allowed, self.worktree, _asked_by_rule(request))
        if decided == "allow":
            response: dict[str, Any] = {"behavior": "allow", "updatedInput": request.get("input") or {}}
        elif decided == "deny":
            response = {"behavior": "deny", "message": "This service's rules (AGENT_APPROVALS) never allow this call."}
        else:
            if self.asked is None:
                self.asked = call
            response = {"behavior": "deny", "message": WAITING, "interrupt": True}
        self._lines.put_nowait(_line({"type": "control_response", "response": {
            "subtype": "success", "request_id": request_id, "response": response}}))


def claude_code_rules(rules: list[Rule]) -> list[str]:
    """Rules as Claude Code applies them: a `Write(path)` rule is sent as `Edit(path)` too, since Claude Code
    checks every tool that edits files against `Edit` path rules and passes over `Write` ones (2.1.332)."""
    written = [str(rule) for rule in rules]
    for rule in rules:
        if rule.tool == "Write" and rule.specifier is not None and f"Edit({rule.specifier})" not in written:
            written.append(f"Edit({rule.specifier})")
    return written


def _asked_by_rule(request: dict[str, Any]) -> bool:
    """Whether Claude Code asks because a rule matched: it says so (`rule`, or the rule it matched), or a
    part of the command was asked (`subcommandResults`) and it suggests no rule to allow it, as for every
    call an ask rule names (no allow rule overrides an ask rule). A call its permission mode asks about
    comes with suggestions."""
    reason = request.get("decision_reason_type")
    return reason == "rule" or bool(request.get("matched_ask_rule")) or (
        reason == "subcommandResults" and not request.get("permission_suggestions"))


def _suggested_rule(suggestions: object) -> str | None:
    """The first rule Claude Code suggests adding (`Bash(touch x)`), as "allow for this conversation" keeps it."""
    for suggestion in suggestions if isinstance(suggestions, list) else []:
        if isinstance(suggestion, dict) and suggestion.get("type") == "addRules":
            for rule in suggestion.get("rules") or []:
                if isinstance(rule, dict) and rule.get("toolName"):
                    content = rule.get("ruleContent")
                    return f"{rule['toolName']}({content})" if content else str(rule["toolName"])
    return None


def _line(event: dict[str, Any]) -> bytes:
    return (json.dumps(event) + "\n").encode()

