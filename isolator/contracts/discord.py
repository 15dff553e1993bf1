"""What the Discord interactions endpoint and the Discord deliverer agree on: how a slash command's message is keyed."""

from __future__ import annotations

_INTERACTION = "interaction:"


def interaction_key(interaction_id: str) -> str:
    """The message key of a slash command: Discord gives each use of a command its own id."""
    return f"{_INTERACTION}{interaction_id}"


def interaction_of(message_key: str | None) -> str | None:
    """The interaction id a message key was made from, or None for a message from the Gateway."""
    if message_key is None or not message_key.startswith(_INTERACTION):
        return None
    return message_key.removeprefix(_INTERACTION)
