"""A conversation's agent session as the chat commands see it (`/reset`, `/status`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class SessionQuery:
    platform: str
    conversation_id: str


@dataclass
class SessionSummary:
    """The conversation's current session; `exists` False when it has none."""

    exists: bool = False
    driver: str = ""  # the agent as a person calls it ("claude", "the example agent")
    turns: int = 0
    started_at: str = ""  # ISO 8601, UTC
    cost_usd: float = 0.0
    tokens: int = 0
