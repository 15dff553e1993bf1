"""Reading a Slack Events API `message`/`app_mention` event: which thread, which message, what text.

Pure functions, no I/O: the webhook decides with them what to hand to a MessageWorkflow.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping

PLATFORM = "slack"

# Message subtypes that are still a person writing in the conversation; every other subtype
# (message_changed, message_deleted, bot_message, channel_join, ...) is not something to answer.
_ANSWERED_SUBTYPES = {None, "thread_broadcast", "file_share"}

# Slack ids are upper-case letters and digits; timestamps are "seconds.micros". Anything else
# would make a conversation id the deliverer cannot split back into channel and thread.
SLACK_ID = re.compile(r"[A-Z0-9]+")
TS = re.compile(r"[0-9]+\.[0-9]+")


@dataclass(frozen=True)
class SlackMessage:
    channel: str
    ts: str
    # the thread's parent ts; None for a top-level message (its own ts starts the thread)
    thread_ts: str | None
    text: str
    user: str = ""
    # the sender's own workspace when the event names it (a channel shared across workspaces does)
    team: str | None = None

    @property
    def conversation_id(self) -> str:
        """One conversation per thread: `channel:thread_ts`, or `channel:ts` for a top-level message."""
        return f"{self.channel}:{self.thread_ts or self.ts}"

    @property
    def message_key(self) -> str:
        """Equal for the `app_mention` and `message` copies of one message, and for Slack's retries."""
        return f"{self.channel}:{self.ts}"


def parse_message(event: Mapping[str, Any], bot_user_id: str | None) -> SlackMessage | None:
    """The message a person wrote, or None for events not to answer (bots, edits, joins, odd shapes)."""
    if event.get("bot_id") is not None or event.get("hidden"):
        return None  # bots, this one included, never start work: no reply loops between bots
    if bot_user_id is not None and event.get("user") == bot_user_id:
        return None
    subtype = event.get("subtype")
    if not (subtype is None or isinstance(subtype, str)) or subtype not in _ANSWERED_SUBTYPES:
        return None
    channel, ts, thread_ts = event.get("channel"), event.get("ts"), event.get("thread_ts")
    if not matches(SLACK_ID, channel) or not matches(TS, ts):
        return None
    if thread_ts is not None and not matches(TS, thread_ts):
        return None
    text, user = event.get("text"), event.get("user")
    text = strip_bot_mentions(text if isinstance(text, str) else "", bot_user_id)
    if not text:
        return None  # a bare mention or blank text: nothing to do, and no run started for it
    team = next((value for value in (event.get("user_team"), event.get("team")) if isinstance(value, str)), None)
    return SlackMessage(
        channel=channel,
        ts=ts,
        thread_ts=thread_ts,
        text=text,
        user=user if isinstance(user, str) else "",
        team=team,
    )


def strip_bot_mentions(text: str, bot_user_id: str | None) -> str:
    """Remove `<@BOTID>` (and `<@BOTID|name>`) so `<@BOTID> /status` reads as the `/status` command."""
    if bot_user_id is None:
        return text.strip()
    mention = re.compile(rf"[ \t]*<@{re.escape(bot_user_id)}(?:\|[^>]*)?>[ \t]*")
    return mention.sub(" ", text).strip()


def matches(pattern: re.Pattern[str], value: object) -> bool:
    return isinstance(value, str) and pattern.fullmatch(value) is not None
