"""What asking the human says (docs/approvals.md): the request in the conversation, its buttons, the
request edited to its answer, and what the resumed session is told. Pure functions."""

from __future__ import annotations

import json

from isolator.approval_rules import relative_to_worktree
from isolator.contracts.approvals import ApprovalKind, Button, Decision, ToolCall, press_value

PREVIEW_LINES = 12
_OUTCOMES = {"once": "✅ Allowed once", "conversation": "✅ Allowed for this conversation", "deny": "🚫 Denied",
             "option": "💬 Answered", "text": "💬 Answered", "approve": "✅ Plan approved", "revise": "✏️ Revision asked",
             "continue": "✅ Continued", "stop": "🛑 Stopped", "timeout": "⌛ No answer in time: denied",
             "stopped": "🛑 Ended by /stop"}


def call_text(call: ToolCall, worktree: str) -> str:
    """The call as a person reads it: the command; the file and what goes into it; else its input."""
    given = call.input
    if call.tool_name == "Bash":
        return f"```\n{given.get('command', '')}\n```"
    path = str(given.get("file_path") or given.get("notebook_path") or "")
    if path:
        shown = relative_to_worktree(path, worktree)
        if call.tool_name == "Write":
            return f"write `{shown}`:\n```\n{_preview(str(given.get('content', '')))}\n```"
        if "old_string" in given:
            removed = "\n".join(f"- {line}" for line in str(given["old_string"]).splitlines()[:PREVIEW_LINES])
            added = "\n".join(f"+ {line}" for line in str(given.get("new_string", "")).splitlines()[:PREVIEW_LINES])
            return f"edit `{shown}`:\n```diff\n{removed}\n{added}\n```"
        return f"{call.tool_name} `{shown}`"
    if call.tool_name == "WebFetch":
        return f"fetch {given.get('url', '')}"
    return f"`{call.tool_name}` with\n```\n{_preview(json.dumps(given, indent=1))}\n```"


def request_text(kind: ApprovalKind, call: ToolCall | None, worktree: str, code: str, run_message: str,
                 requested_by: str | None, plan: str = "", spent: float = 0.0, cap: float = 0.0) -> str:
    started = f" (started by {requested_by})" if requested_by else ""
    asked = f"Asked by the run of “{_short(run_message)}”{started}. Code `{code}`."
    if kind == "tool" and call is not None:
        return f"🔐 **Approval needed.** The agent wants to {_verb(call)}{call_text(call, worktree)}\n{asked}"
    if kind == "question" and call is not None:
        lines = []
        for question in _questions(call):
            lines.append(f"❓ **The agent asks:** {question.get('question', '')}")
            lines += [f"{index + 1}. {option.get('label', '')}" + (f": {option['description']}"
                                                                    if option.get("description") else "")
                      for index, option in enumerate(question.get("options") or [])]
        return "\n".join(lines) + f"\nPress an option, or reply in this conversation in your own words.\n{asked}"
    if kind == "plan":
        return f"📋 **The agent's plan**, to approve or revise:\n\n{plan.strip() or '(the agent gave no text)'}\n\n{asked}"
    return (f"💸 This run has spent ${spent:.2f} of ${cap:.2f} (AGENT_MAX_COST_USD). Continue with another "
            f"${cap:.2f}?\n{asked}")


def buttons(kind: ApprovalKind, code: str, call: ToolCall | None) -> list[Button]:
    if kind == "tool":
        return [Button("Allow once", press_value(code, "once"), "primary"),
                Button("Allow for this conversation", press_value(code, "conversation")),
                Button("Deny", press_value(code, "deny"), "danger")]
    if kind == "question" and call is not None:
        options = [option for question in _questions(call)[:1] for option in question.get("options") or []]
        return [Button(str(option.get("label", index + 1))[:75], press_value(code, "option", index))
                for index, option in enumerate(options[:20])]
    if kind == "plan":
        return [Button("Approve", press_value(code, "approve"), "primary"), Button("Revise", press_value(code, "revise"))]
    return [Button("Continue", press_value(code, "continue"), "primary"), Button("Stop", press_value(code, "stop"), "danger")]


def answered_text(request: str, decision: Decision, call: ToolCall | None) -> str:
    """The request, edited to its answer: who gave it, and what."""
    outcome = _OUTCOMES.get(decision.choice, decision.choice)
    by = "" if decision.choice in ("timeout", "stopped") else f" by {decision.by}"
    said = answer_of(decision, call)
    detail = f": “{_short(said, 300)}”" if said and decision.choice in ("option", "text", "deny", "revise") else ""
    return f"{request}\n\n{outcome}{by}{detail}"


def answer_of(decision: Decision, call: ToolCall | None) -> str:
    """A question's answer in words (an option's label), or the reason given."""
    if decision.choice == "option" and call is not None and decision.option is not None:
        options = [option for question in _questions(call)[:1] for option in question.get("options") or []]
        if 0 <= decision.option < len(options):
            return str(options[decision.option].get("label", ""))
    return decision.text


def resume_text(kind: ApprovalKind, call: ToolCall | None, decision: Decision, worktree: str,
                timeout_hours: float) -> str:
    """What the resumed session is told: the answer, who gave it, and what to do now."""
    subject = call_text(call, worktree) if call is not None and kind == "tool" else ""
    reason = f" Their reason: “{decision.text}”." if decision.text and decision.choice != "option" else ""
    if decision.choice in ("once", "conversation"):
        scope = " for the rest of this conversation" if decision.choice == "conversation" else " this once"
        return f"{decision.by} approved this call{scope}:\n{subject}\nIt is allowed now: make it again and go on."
    if decision.choice == "timeout" and kind == "question":
        return f"Nobody answered your question within {timeout_hours:g} h. Go on as you think best, and say what you chose."
    if decision.choice == "timeout" and kind == "plan":
        return f"Nobody approved your plan within {timeout_hours:g} h. Do not carry it out; stop and say it waits."
    if decision.choice == "timeout":
        return (f"Nobody answered within {timeout_hours:g} h, so this call is denied:\n{subject}\n"
                "Do not make it. Go on without it, or stop and say what you need.")
    if decision.choice == "deny" and kind == "tool":
        return (f"{decision.by} denied this call:\n{subject}\n{reason.strip()}\n"
                "Do not make it. Go on without it, or stop and say what you need.").replace("\n\n", "\n")
    if kind == "question":
        if decision.choice == "deny":
            return f"{decision.by} did not answer your question.{reason} Go on as you think best."
        question = _questions(call)[0].get("question", "") if call is not None and _questions(call) else ""
        return f"Your question “{question}” was answered by {decision.by}: “{answer_of(decision, call)}”. Go on with that."
    if kind == "plan":
        if decision.choice == "approve":
            return f"{decision.by} approved your plan. Carry it out now."
        return f"{decision.by} asks you to revise your plan.{reason} Revise it and present it again."
    return f"{decision.by} allowed this run to spend more. Go on where you stopped."


def _verb(call: ToolCall) -> str:
    return "run:\n" if call.tool_name == "Bash" else "use " if call.tool_name not in (
        "Write", "Edit", "MultiEdit", "NotebookEdit", "WebFetch") else ""


def _questions(call: ToolCall | None) -> list[dict]:
    questions = (call.input.get("questions") if call is not None else None) or []
    return [question for question in questions if isinstance(question, dict)]


def _preview(text: str) -> str:
    lines = text.splitlines()
    shown = "\n".join(line[:200] for line in lines[:PREVIEW_LINES])
    return shown + (f"\n… ({len(lines) - PREVIEW_LINES} more lines)" if len(lines) > PREVIEW_LINES else "")


def _short(text: str, limit: int = 80) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
