"""Asking the human (docs/approvals.md): a tool call that needs a person's yes, a question of the agent,
a plan to approve, a budget reached. The run ends its turn without the call and records an approval;
the environment's workflow waits for the answer, durably, and resumes the session with it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

ApprovalKind = Literal["tool", "question", "plan", "budget"]
# What a press (or a command, or a free-text reply to a question) answers.
Choice = Literal["once", "conversation", "deny", "option", "text", "continue", "stop", "approve", "revise"]
ApprovalState = Literal["pending", "allowed", "denied", "answered", "timed_out", "stopped"]
CHOICES: tuple[str, ...] = ("once", "conversation", "deny", "option", "text", "continue", "stop", "approve", "revise")
PRESS_PREFIX = "isolator-approval"
_PRESS = re.compile(rf"{PRESS_PREFIX}:(?P<code>[A-Z0-9]{{4,16}}):(?P<choice>{'|'.join(CHOICES)})(?::(?P<option>[0-9]{{1,3}}))?",
                    re.ASCII)


@dataclass
class Button:
    """One answer of a request, as a platform's button; `value` comes back with the press."""

    label: str
    value: str
    style: Literal["primary", "danger", "default"] = "default"


def press_value(code: str, choice: str, option: int | None = None) -> str:
    """What a button sends back: short enough for Telegram's 64-byte callback data."""
    return f"{PRESS_PREFIX}:{code}:{choice}" + (f":{option}" if option is not None else "")


@dataclass
class PressedValue:
    code: str
    choice: str
    option: int | None = None


def parse_press_value(value: str) -> PressedValue | None:
    """A button's value back; None when it is not one of ours (or was tampered with)."""
    found = _PRESS.fullmatch(value)
    if found is None:
        return None
    return PressedValue(found["code"], found["choice"], int(found["option"]) if found["option"] else None)


@dataclass
class Press:
    """An answer as it came in, from any platform: who pressed (the platform's user id; a GitHub login,
    lowercased) and what."""

    code: str
    choice: str
    platform: str
    user: str
    option: int | None = None
    reason: str = ""  # a denial's reason; a free-text answer
    name: str = ""  # the presser as shown in the answer (`@alice`); their user id when empty
    conversation_id: str | None = None  # where it was pressed, when the platform says


@dataclass
class PressOutcome:
    """What became of a press: `taken` (the run goes on with it), or why not, in words for the presser
    alone where the platform can say it privately; `unavailable`: nothing decided, press again."""

    outcome: Literal["taken", "refused", "already", "unknown", "unavailable"]
    text: str


@dataclass
class ToolCall:
    """A call the agent asked to make, as its permission prompt gave it."""

    tool_name: str
    input: dict
    tool_use_id: str = ""
    suggested_rule: str | None = None  # the rule Claude Code suggests for "allow for this conversation"


@dataclass
class ApprovalAsk:
    """What a run ended waiting for (recorded, and its message sent, by the run)."""

    approval_id: str
    code: str
    kind: ApprovalKind
    conversation: str  # conversation_key(platform, id)
    requested_by: str | None  # the platform user whose message started the run
    call: ToolCall | None = None  # the tool call, the question or the plan
    summary: str = ""  # the request in one line, for the workflow's details
    timeout_hours: float = 24  # APPROVAL_TIMEOUT_HOURS: unanswered this long, it is denied


@dataclass
class Decision:
    """An answer, checked by the API (who may answer) and given to the environment's workflow."""

    approval_id: str
    choice: str
    by: str  # who answered, as shown: `alice`, `user 111`, or "nobody" (the timeout)
    option: int | None = None
    text: str = ""  # a denial's reason, a question's answer


@dataclass
class DecisionTaken:
    taken: bool
    detail: str = ""


@dataclass
class AllowedCalls:
    """What a run's permission relay allows without asking, beyond the rules: the exact calls a person
    allowed once for this run, and the conversation's own rules."""

    calls: list[ToolCall] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)


@dataclass
class CloseApprovalInput:
    """The workflow's record of the answer: the row closed, the request's message edited to it, and for
    "allow for this conversation" the rule kept for the conversation."""

    decision: Decision
    state: ApprovalState
    # The wait ended the run, nothing goes on with the answer (`/stop`, a budget's Stop or its timeout): the
    # run's record, `waiting` until then, says `stopped`.
    ends_run: bool = False


@dataclass
class BudgetRaise:
    """`/budget +10`: today's budget of a codebase raised by an ADMIN_USERS person, recorded."""

    codebase_id: str
    amount_usd: float
    by: str
    platform: str
    conversation_id: str
    key: str  # the message's workflow: a retry records it once


@dataclass
class BudgetView:
    """A codebase's day: AGENT_DAILY_BUDGET_USD, what was added to it today, and what was spent."""

    budget_usd: float | None
    raised_usd: float
    spent_usd: float
    raises: list[str] = field(default_factory=list)  # "+$10.00 by @alice at 14:02 UTC"
