"""Slack messages as automations' triggers (docs/automations.md): `on = ["slack:message:#alerts"]`, or
`slack:message:C0123ABCD:disk (full|low)` with a regular expression the text must match.

A person's top-level message in the channel fires every automation naming it, by name or by id
(automations are global by name, whichever codebase they work on). Bots' messages, our own, edits and
thread replies fire nothing. Slack's events carry the channel's id: its name comes from
conversations.info (the `channels:read` scope), asked only when an automation names a channel by name,
and cached. Each firing's id is the message's own (`slack-<channel>-<ts>`), so Slack's retries, the
`app_mention` copy of a message and a second process given the same event fire once.
"""

from __future__ import annotations

import logging
import time
from weakref import WeakKeyDictionary

import asyncpg
from slack_bolt.async_app import AsyncBoltContext
from slack_bolt.response import BoltResponse
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from temporalio.client import Client
from temporalio.service import RPCError

from activities.automations.records import AutomationRecords
from api.automations import start_firing
from api.platforms.slack.events import SLACK_ID, SlackMessage, matches
from isolator.automation_events import matches_slack
from isolator.contracts.automation import FiringInput
from isolator.settings import Settings

log = logging.getLogger(__name__)

# A channel renamed is seen by its new name within this long.
NAME_SECONDS = 600.0


class SlackNames:
    """What a firing's fields need of Slack, asked once: a channel's name from its id (None: unknown, e.g.
    without `channels:read`; asked again after NAME_SECONDS) and the workspace's URL, for permalinks."""

    def __init__(self) -> None:
        self._names: dict[str, tuple[str | None, float]] = {}
        self._workspace: str | None = None

    async def channel(self, slack: AsyncWebClient, channel: str) -> str | None:
        now = time.monotonic()
        cached = self._names.get(channel)
        if cached is not None and cached[1] > now:
            return cached[0]
        try:
            found = (await slack.conversations_info(channel=channel)).get("channel") or {}
            name = found.get("name") if isinstance(found.get("name"), str) else None
        except SlackApiError as error:  # an automation naming its channel by id still fires
            log.warning("slack channel %s: no name (%s); automations naming it by name do not fire",
                        channel, error.response.get("error"))
            name = None
        self._names[channel] = (name, now + NAME_SECONDS)
        return name

    async def permalink(self, slack: AsyncWebClient, channel: str, ts: str) -> str:
        if self._workspace is None:
            try:
                url = (await slack.auth_test()).get("url")
            except SlackApiError:
                url = None
            self._workspace = url.rstrip("/") if isinstance(url, str) and url.startswith("https://") else ""
        return f"{self._workspace}/archives/{channel}/p{ts.replace('.', '')}" if self._workspace else ""


# One per bolt app (its Web API client), kept as long as the app.
_NAMES: WeakKeyDictionary[AsyncWebClient, SlackNames] = WeakKeyDictionary()


async def fire_slack_automations(settings: Settings, pool: asyncpg.Pool, temporal: Client, slack: AsyncWebClient,
                                 message: SlackMessage) -> list[str]:
    """The firings this message started (none when it concerns no automation)."""
    if settings.automations == "off" or message.thread_ts not in (None, message.ts):
        return []
    automations = await AutomationRecords(pool).unpaused_on("slack")
    if not automations:
        return []
    by_name = any(not matches(SLACK_ID, trigger.argument.partition(":")[0]) for stored in automations
                  for trigger in stored.automation.triggers if trigger.platform == "slack")
    names = _NAMES.setdefault(slack, SlackNames())
    name = await names.channel(slack, message.channel) if by_name else None
    fired = [(stored, trigger) for stored in automations
             if (trigger := next((trigger for trigger in stored.automation.triggers
                                  if matches_slack(trigger, message.channel, name, message.text)), None))]
    if not fired:
        return []
    key = f"slack-{message.channel}-{message.ts}"
    fields = {"text": message.text, "user": message.user, "channel": message.channel, "channel_name": name or "",
              "ts": message.ts, "permalink": await names.permalink(slack, message.channel, message.ts)}
    started = []
    for stored, trigger in fired:
        firing = FiringInput(stored.automation.name, trigger=trigger.spelled(), event_id=key, event=fields)
        started.append(await start_firing(client=temporal, settings=settings, firing=firing, key=key))
        log.info("automation %s fired by %s", stored.automation.name, trigger.spelled())
    return started


async def fire_from_message(settings: Settings, context: AsyncBoltContext, slack: AsyncWebClient,
                            message: SlackMessage | None) -> BoltResponse | None:
    """For the `message` listener: None when done (fired or not); a 503 when Temporal is away, so that
    Slack delivers the event again."""
    if message is None:
        return None
    try:
        await fire_slack_automations(settings, context["pool"], context["temporal"], slack, message)
    except RPCError as error:
        log.warning("slack message %s fired no automation now: %s", message.message_key, error)
        return BoltResponse(status=503, body={"detail": "cannot start the work now; retry later"})
    return None
