"""Reading Discord: interactions (the `/isolator` slash command, a press of a request's button) and the
text of Gateway messages.

Pure functions, no I/O: the interactions endpoint and the Gateway listener decide with them what
to hand to a MessageWorkflow.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping

from isolator.contracts.discord import interaction_key

PLATFORM = "discord"

# Interaction types (https://discord.com/developers/docs/interactions/receiving-and-responding)
PING, APPLICATION_COMMAND, MESSAGE_COMPONENT = 1, 2, 3
# Interaction callback types: PONG, a message now, "thinking…" to be followed up within 15 minutes,
# and, for a button, "pressed" with the message left as it is (for now).
PONG, CHANNEL_MESSAGE, DEFERRED_CHANNEL_MESSAGE, DEFERRED_UPDATE_MESSAGE = 1, 4, 5, 6
EPHEMERAL = 1 << 6  # a message flag: only the user who ran the command (or pressed the button) sees it
BUTTON = 2  # a component type
MAX_CUSTOM_ID = 100  # Discord's limit on a component's custom_id

COMMAND_NAME = "isolator"
STRING_OPTION = 3

# Registered by the Gateway listener at start: `/isolator <text>`, in guild channels, threads and DMs.
SLASH_COMMAND: dict[str, Any] = {
    "name": COMMAND_NAME,
    "type": 1,
    "description": "A command (status, worktree list, help, stop) or a task for the coding agent",
    "options": [{
        "type": STRING_OPTION,
        "name": "text",
        "description": "for example: status, worktree list, help, or what the agent should do",
        "required": False,
    }],
}

THREAD_NAME_LIMIT = 100  # Discord's limit on a thread's name
_SNOWFLAKE = re.compile(r"[0-9]{1,20}")
# The interaction token is used in a URL path: Discord's are URL-safe base64 and dots.
_TOKEN = re.compile(r"[A-Za-z0-9._-]{1,500}")


class MalformedInteraction(ValueError):
    """The body is JSON but not an interaction this service can read."""


@dataclass(frozen=True)
class Ping:
    """Discord checking the endpoint: answered with a PONG."""


@dataclass(frozen=True)
class NotForUs:
    """A verified interaction this service does not take (another command, a select menu); says why."""

    reason: str


@dataclass(frozen=True)
class SlashCommand:
    interaction_id: str
    application_id: str
    token: str
    # the channel the command was used in: a thread, a text channel or a DM
    channel_id: str
    text: str
    # who ran it: their id, their server (None in a DM) and their roles there
    user_id: str = ""
    guild_id: str | None = None
    roles: frozenset[str] = frozenset()

    @property
    def conversation_id(self) -> str:
        """The channel is the conversation: a thread's id, as for mentions, or a channel's or DM's."""
        return self.channel_id

    @property
    def message_key(self) -> str:
        return interaction_key(self.interaction_id)


@dataclass(frozen=True)
class ButtonPress:
    """A button of a message pressed: its `custom_id`, where (the message's channel) and by whom."""

    interaction_id: str  # the press's own id, the same in a replay of it (seen_presses.py)
    channel_id: str
    custom_id: str
    user_id: str
    guild_id: str | None = None
    roles: frozenset[str] = frozenset()


def read_interaction(payload: object, command_names: frozenset[str]) -> Ping | NotForUs | SlashCommand | ButtonPress:
    """What a verified interaction asks for; MalformedInteraction says what is wrong with its shape.

    `command_names`: the chat commands, so that `/isolator status` reads as `/status`.
    """
    if not isinstance(payload, Mapping):
        raise MalformedInteraction("expected a JSON object")
    kind = payload.get("type")
    if kind == PING:
        return Ping()
    if kind == MESSAGE_COMPONENT:
        return _read_press(payload)
    if kind != APPLICATION_COMMAND:
        return NotForUs("only the `/isolator` slash command and isolator's buttons are answered here")
    data = payload.get("data")
    if not isinstance(data, Mapping):
        raise MalformedInteraction("an application command needs `data`")
    if data.get("name") != COMMAND_NAME:
        return NotForUs(f"unknown command; use `/{COMMAND_NAME} <text>`")
    channel_id = payload.get("channel_id") or _field(payload.get("channel"), "id")
    fields = {"id": payload.get("id"), "application_id": payload.get("application_id"), "channel_id": channel_id}
    for name, value in fields.items():
        if not _matches(_SNOWFLAKE, value):
            raise MalformedInteraction(f"`{name}` must be a snowflake (a string of digits)")
    if not _matches(_TOKEN, payload.get("token")):
        raise MalformedInteraction("`token` is missing or not an interaction token")
    user_id, guild_id, roles = _invoker(payload)
    return SlashCommand(
        interaction_id=payload["id"],
        application_id=payload["application_id"],
        token=payload["token"],
        channel_id=channel_id,
        text=as_chat_text(_option_text(data), command_names),
        user_id=user_id,
        guild_id=guild_id,
        roles=roles,
    )


def _read_press(payload: Mapping[str, Any]) -> NotForUs | ButtonPress:
    data = payload.get("data")
    if not isinstance(data, Mapping):
        raise MalformedInteraction("a message component interaction needs `data`")
    if data.get("component_type") != BUTTON:
        return NotForUs("only isolator's buttons are answered here")
    custom_id = data.get("custom_id")
    if not isinstance(custom_id, str) or not 0 < len(custom_id) <= MAX_CUSTOM_ID:
        raise MalformedInteraction(f"`data.custom_id` must be a string of 1 to {MAX_CUSTOM_ID} characters")
    channel_id = payload.get("channel_id") or _field(payload.get("channel"), "id")
    for name, value in {"id": payload.get("id"), "channel_id": channel_id}.items():
        if not _matches(_SNOWFLAKE, value):
            raise MalformedInteraction(f"`{name}` must be a snowflake (a string of digits)")
    user_id, guild_id, roles = _invoker(payload)
    return ButtonPress(payload["id"], channel_id, custom_id, user_id, guild_id, roles)


def _invoker(payload: Mapping[str, Any]) -> tuple[str, str | None, frozenset[str]]:
    """Who ran the command or pressed the button: `member` (with its roles) in a server, `user` in a DM."""
    guild_id, member = payload.get("guild_id"), payload.get("member")
    if guild_id is not None:
        if not _matches(_SNOWFLAKE, guild_id) or not isinstance(member, Mapping):
            raise MalformedInteraction("an interaction in a server needs a snowflake `guild_id` and its `member`")
        user, roles = member.get("user"), member.get("roles", [])
        if not isinstance(roles, list) or not all(_matches(_SNOWFLAKE, role) for role in roles):
            raise MalformedInteraction("`member.roles` must be a list of snowflakes")
    else:
        user, roles = payload.get("user"), []
    user_id = _field(user, "id")
    if not _matches(_SNOWFLAKE, user_id):
        raise MalformedInteraction("the interaction needs the snowflake `id` of its `member.user` or `user`")
    return str(user_id), guild_id, frozenset(roles)


def only_to_them(text: str) -> dict[str, Any]:
    """An interaction's answer in the channel that only its user (who ran the command, pressed the button) sees."""
    return {"type": CHANNEL_MESSAGE, "data": {"content": text, "flags": EPHEMERAL}}


def as_chat_text(text: str, command_names: frozenset[str]) -> str:
    """`/isolator status` -> `/status`; `/isolator` alone -> `/help`; anything else is for the agent."""
    words = text.split()
    if not words:
        return "/help"
    if words[0].lower() in command_names:
        return "/" + text.strip()
    return text.strip()


def strip_bot_mentions(text: str, bot_user_id: int) -> str:
    """Remove `<@ID>` and `<@!ID>` so `@isolator /status` reads as the `/status` command."""
    return re.sub(rf"[ \t]*<@!?{bot_user_id}>[ \t,:]*", " ", text).strip()


def thread_name(text: str) -> str:
    """A thread's name from the message that started it: its first line, within Discord's limit."""
    first_line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    name = first_line or "isolator"
    return name if len(name) <= THREAD_NAME_LIMIT else name[: THREAD_NAME_LIMIT - 1] + "…"


def _option_text(data: Mapping[str, Any]) -> str:
    options = data.get("options")
    if options is None:
        return ""
    if not isinstance(options, list):
        raise MalformedInteraction("`data.options` must be a list")
    for option in options:
        if isinstance(option, Mapping) and option.get("name") == "text":
            value = option.get("value")
            if not isinstance(value, str):
                raise MalformedInteraction("the `text` option must be a string")
            return value
    return ""


def _field(value: object, name: str) -> object:
    return value.get(name) if isinstance(value, Mapping) else None


def _matches(pattern: re.Pattern[str], value: object) -> bool:
    return isinstance(value, str) and pattern.fullmatch(value) is not None
