"""The `/isolator <text>` slash command in Slack: `/isolator status` reads as `/status`, anything else
is for the agent, as a mention would be.

A slash command has no message of its own to thread under, so the bot posts one (`<@user> ran
/isolator ...`) in the channel, and that message's thread is the conversation: replies go there, and
the person goes on there as in any thread the bot is in. The command's workflow is keyed by its
`trigger_id` (the same in Slack's resends of it), and a command whose workflow exists already posts
nothing again. The thread is opened before the workflow starts, so the process that opens it first
claims the command's key (in `seen_presses`): another process sent the same command meanwhile leaves
it unacknowledged (Slack sends it again, and by then its workflow exists), unless the claim is older
than CLAIM_SECONDS without a workflow (its process died in between). A refused sender is told privately
in the command's answer and nothing is posted.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Mapping

import aiohttp
import asyncpg
from slack_bolt.response import BoltResponse
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from api.dispatch import UnusableText, start_message
from api.platforms.discord.events import as_chat_text
from api.platforms.slack.events import PLATFORM, SLACK_ID, matches
from isolator.contracts.message import message_workflow_id
from isolator.settings import Settings
from isolator.trust import SlackSender, admit_slack
from workflows.chat.commands import HANDLERS

log = logging.getLogger(__name__)

_COMMAND_NAMES = frozenset(HANDLERS)
_RETRY_LATER = "isolator cannot start the work now; please run the command again in a minute."
CLAIM_SECONDS = 30  # how long a claim to open a command's thread holds without its workflow


@dataclass(frozen=True)
class SlackCommand:
    typed: str  # as the person wrote it: `/isolator status`
    text: str  # the chat text it stands for: `/status`, or the request for the agent
    channel: str
    user: str
    team: str
    trigger_id: str

    @property
    def message_key(self) -> str:
        return f"command:{self.trigger_id}"


def read_command(payload: Mapping[str, Any], installed_team: str) -> SlackCommand | str:
    """The command, or why it cannot be read."""
    fields = {name: payload.get(name) for name in ("command", "text", "channel_id", "user_id", "trigger_id")}
    if not all(isinstance(value, str) for value in fields.values()):
        return "a slash command needs `command`, `text`, `channel_id`, `user_id` and `trigger_id` as strings"
    if not matches(SLACK_ID, fields["channel_id"]) or not matches(SLACK_ID, fields["user_id"]):
        return "`channel_id` and `user_id` must be Slack ids"
    team = payload.get("team_id")
    return SlackCommand(typed=f"{fields['command']} {fields['text']}".strip(),
                        text=as_chat_text(fields["text"], _COMMAND_NAMES),
                        channel=fields["channel_id"], user=fields["user_id"],
                        team=team if isinstance(team, str) and team else installed_team,
                        trigger_id=fields["trigger_id"])


async def take_command(settings: Settings, temporal: Client, pool: asyncpg.Pool, slack: AsyncWebClient,
                       payload: Mapping[str, Any], installed_team: str) -> BoltResponse:
    """Start the command's workflow in a thread of its own; the answer is what its user alone sees."""
    command = read_command(payload, installed_team)
    if isinstance(command, str):
        return BoltResponse(status=400, body={"detail": f"cannot read the command: {command}"})
    admission = admit_slack(SlackSender(command.user, command.team, installed_team), settings)
    try:
        if await _started_before(temporal, command):
            return BoltResponse(status=200, body="")  # Slack sent it again: its work started the first time
        conversation_id = command.channel  # a refused command has no thread: its refusal is said here only
        if admission.refused is not None:
            admission.answered = True
        elif not await _claim(pool, command):
            return BoltResponse(status=503, body={"detail": "another process is opening this command's thread"})
        else:
            opening = await _open_thread(slack, command)
            if isinstance(opening, BoltResponse):
                return opening
            conversation_id = f"{command.channel}:{opening}"
        await start_message(settings, temporal, platform=PLATFORM, conversation_id=conversation_id,
                            text=command.text, message_key=command.message_key, admission=admission)
    except UnusableText as error:
        return _only_to_them(f"Cannot read that command: {error}. Write it again as plain text.")
    except RPCError as error:
        # Answered, so not sent again: the person is told to run it again instead.
        log.warning("slack command %s not started: %s", command.message_key, error)
        return _only_to_them(_RETRY_LATER)
    if admission.refused is not None:
        return _only_to_them(admission.refused)
    return BoltResponse(status=200, body="")


async def _started_before(temporal: Client, command: SlackCommand) -> bool:
    try:
        await temporal.get_workflow_handle(message_workflow_id(PLATFORM, command.message_key)).describe()
    except RPCError as error:
        if error.status == RPCStatusCode.NOT_FOUND:
            return False
        raise
    return True


async def _claim(pool: asyncpg.Pool, command: SlackCommand) -> bool:
    """Whether this process opens the command's thread: the first to ask, or the first after a stale claim."""
    claimed = await pool.fetchval(
        "INSERT INTO seen_presses (platform, press_key) VALUES ($1, $2) ON CONFLICT (platform, press_key) "
        "DO UPDATE SET seen_at = now() WHERE seen_presses.seen_at < now() - $3::interval RETURNING true",
        PLATFORM, command.message_key, timedelta(seconds=CLAIM_SECONDS),
    )
    return claimed is not None


async def _open_thread(slack: AsyncWebClient, command: SlackCommand) -> str | BoltResponse:
    """The `ts` of the message the command's thread hangs from, or what its user is told instead."""
    try:
        posted = await slack.chat_postMessage(channel=command.channel, text=f"<@{command.user}> ran `{command.typed}`")
    except SlackApiError as error:
        reason = error.response.get("error")
        log.warning("slack command %s: cannot open its thread in %s: %s", command.message_key, command.channel, reason)
        if reason in ("not_in_channel", "channel_not_found"):
            return _only_to_them("I cannot post in this channel: invite me to it (`/invite @isolator`), "
                                 "then run the command again.")
        return _only_to_them(_RETRY_LATER)
    except (aiohttp.ClientError, TimeoutError) as error:
        log.warning("slack command %s: Slack cannot be reached: %s", command.message_key, error)
        return _only_to_them(_RETRY_LATER)
    ts = posted.get("ts")
    return ts if isinstance(ts, str) else _only_to_them(_RETRY_LATER)


def _only_to_them(text: str) -> BoltResponse:
    return BoltResponse(status=200, body={"response_type": "ephemeral", "text": text})
