"""Inputs and results of the workflows, as the API and the Temporal UI see them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from activities.contracts import IsolationHints

Outcome = Literal[
    "reused",  # the conversation's own environment, still healthy
    "attached",  # an active environment of the same identity
    "created",  # a new worktree
    "no_codebase",  # nothing to isolate yet: the user was told how to register one
    "command",  # a command was answered; isolation was not touched
    "shared",  # a linked issue's environment, e.g. the issue a PR fixes
    "adopted",  # a worktree already on disk, recorded as it is
    "closed",  # a close event was recorded
    "limit",  # the codebase is full: nothing was created and the user was told how to free room
    "failed",  # the user was told what went wrong; nothing was left behind
]


@dataclass
class MessageInput:
    platform: str
    conversation_id: str
    text: str
    # the platform's delivery key; the workflow ID is built from it
    message_key: str
    # where `/clone` registers new codebases when nothing else says
    default_host: str
    hints: IsolationHints | None = None
    # "closed": the platform closed the conversation (a GitHub issue or PR); no text to answer
    kind: Literal["message", "closed"] = "message"


@dataclass
class Resolution:
    outcome: Outcome
    working_path: str | None = None
    branch: str | None = None
    environment_id: str | None = None
    replies: list[str] = field(default_factory=list)


def message_workflow_id(platform: str, message_key: str) -> str:
    return f"message:{platform}:{message_key}"
