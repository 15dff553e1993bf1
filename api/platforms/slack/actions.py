"""Presses of a request's buttons in Slack: the `block_actions` interactions Slack posts to the app's
Interactivity Request URL (POST /webhooks/slack/interactions) or sends over Socket Mode (an
`interactive` envelope), read here and answered through `answer_press`. A press that is not taken is
explained to the presser alone (`chat.postEphemeral`).

Slack has no free text on a button: a Deny press denies without a reason (a person may explain in the thread).
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any, Mapping
from urllib.parse import parse_qs

import aiohttp
import asyncpg
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from temporalio.client import Client

from api.approvals import answer_press
from api.platforms.seen_presses import first_press
from api.platforms.slack.events import PLATFORM, SLACK_ID, TS, matches
from isolator.contracts.approvals import Press, PressOutcome, parse_press_value
from isolator.settings import Settings

log = logging.getLogger(__name__)

_UNTAKEN = "Your answer could not be taken just now; press the button again in a moment."


class UnreadableInteraction(ValueError):
    """The form or its `payload` is not a block_actions interaction we can read: a 400, with this reason."""


@dataclass(frozen=True)
class SlackPress:
    press: Press
    channel: str
    thread_ts: str  # the request's thread: where the presser's private note shows
    key: str  # `user:action_ts`: the press's own id, the same in a replay of it (seen_presses.py)


def read_presses(body: str) -> list[SlackPress]:
    """The presses of our buttons in a signed interaction's form body; other actions are not ours."""
    return read_payload_presses(_payload(body))


async def fresh_presses(pool: asyncpg.Pool, presses: list[SlackPress]) -> list[SlackPress]:
    """The presses not seen before, now recorded: one posted or sent again answers nothing."""
    return [item for item in presses if await first_press(pool, PLATFORM, item.key)]


def read_payload_presses(payload: Mapping[str, Any]) -> list[SlackPress]:
    """The presses of our buttons in an interaction's payload (the form's `payload`, or a socket envelope's)."""
    if payload.get("type") != "block_actions":
        raise UnreadableInteraction(f"only block_actions interactions are answered, not {payload.get('type')!r}")
    user = _object(payload, "user").get("id")
    if not matches(SLACK_ID, user):
        raise UnreadableInteraction("`user.id` is not a Slack user id")
    container, message = _object(payload, "container"), _object(payload, "message")
    channel = _object(payload, "channel").get("id", container.get("channel_id"))
    # One conversation per thread, as for messages (SlackMessage.conversation_id); a request is posted in its thread.
    thread_ts = (message.get("thread_ts") or container.get("thread_ts")
                 or message.get("ts") or container.get("message_ts"))
    if not matches(SLACK_ID, channel) or not matches(TS, thread_ts):
        raise UnreadableInteraction("no channel id and message ts (`channel.id`, `message.ts`)")
    actions = payload.get("actions")
    if not isinstance(actions, list) or not all(isinstance(action, dict) for action in actions):
        raise UnreadableInteraction("`actions` is not a list of objects")
    presses = []
    for action in actions:
        value = action.get("value")
        pressed = parse_press_value(value) if isinstance(value, str) else None
        if pressed is None:
            continue
        if not matches(TS, action.get("action_ts")):
            raise UnreadableInteraction("a press has no `action_ts`")
        press = Press(pressed.code, pressed.choice, PLATFORM, user, option=pressed.option, name=f"<@{user}>",
                      conversation_id=f"{channel}:{thread_ts}")
        presses.append(SlackPress(press, channel, thread_ts, key=f"{user}:{action['action_ts']}"))
    return presses


async def answer_presses(
    settings: Settings, pool: asyncpg.Pool, temporal: Client, slack: AsyncWebClient, presses: list[SlackPress]
) -> None:
    """Each press through the one answer path; a press not taken gets its reason, privately."""
    for item in presses:
        try:
            outcome = await answer_press(pool, temporal, settings, item.press)
        except Exception:  # after Slack's 200 nobody else hears of it: log, and tell the presser
            log.exception("slack press of %s not answered", item.press.code)
            outcome = PressOutcome("refused", _UNTAKEN)
        if outcome.outcome == "taken":
            continue  # the environment's workflow edits the request's message to the answer
        try:
            await slack.chat_postEphemeral(channel=item.channel, user=item.press.user, thread_ts=item.thread_ts,
                                           text=outcome.text)
        except (SlackApiError, aiohttp.ClientError, TimeoutError) as error:
            log.warning("slack: cannot tell %s about their press of %s: %s", item.press.user, item.press.code, error)


def _payload(body: str) -> dict[str, Any]:
    try:
        fields = parse_qs(body, strict_parsing=True)
    except ValueError:
        fields = {}
    if len(fields.get("payload", [])) != 1:
        raise UnreadableInteraction("expected a form with one `payload` field")
    try:
        payload = json.loads(fields["payload"][0])
    except ValueError:
        raise UnreadableInteraction("`payload` is not JSON") from None
    if not isinstance(payload, dict):
        raise UnreadableInteraction("`payload` is not a JSON object")
    return payload


def _object(payload: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    value = payload.get(key, {})
    if not isinstance(value, dict):
        raise UnreadableInteraction(f"`{key}` is not an object")
    return value
