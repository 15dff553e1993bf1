"""Recognising chat commands (`/clone`, `/status`, `/help`, `/worktree`) in a message."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Command:
    name: str
    args: list[str] = field(default_factory=list)


KNOWN = {"help", "status", "clone", "worktree"}


def parse_command(text: str) -> Command | None:
    """The command a message starts with, after any @mentions; None for an ordinary message."""
    words = text.split()
    while words and words[0].startswith("@"):
        words.pop(0)
    if not words or not words[0].startswith("/") or len(words[0]) < 2:
        return None
    name = words[0][1:].split("@", 1)[0].lower()  # Telegram sends `/status@botname`
    return Command(name=name if name in KNOWN else "unknown", args=words[1:])
