"""What Slack sends, taken the same way whichever way it came in: the one bolt app's listeners.

The webhook (POST /webhooks/slack, api/platforms/slack/webhook.py) and the Socket Mode client
(api/platforms/slack/socket.py) each build an app here and hand it what Slack sent, with the Temporal
client and the database pool in bolt's context (`temporal`, `pool`). Each listener returns only once
the work is recorded: its workflow started, its press recorded, or the reason it is not taken. Then
bolt's 200 (HTTP) or the envelope's acknowledgement (socket) tells Slack it has been taken.

- `app_mention` anywhere, and `message` in threads the bot already takes part in: one MessageWorkflow
  each, keyed by the message itself (`channel:ts`), so the two events of one message, Slack's retries
  and a second process given the same event start it once;
- a slash command (`/isolator <text>`, api/platforms/slack/commands.py): a thread of its own;
- presses of a request's buttons (`block_actions`, api/platforms/slack/actions.py): each taken once,
  by its user and `action_ts`, answered after the acknowledgement.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any

import asyncpg
from slack_bolt.async_app import AsyncApp, AsyncBoltContext
from slack_bolt.response import BoltResponse
from slack_sdk.web.async_client import AsyncWebClient
from temporalio.client import Client
from temporalio.service import RPCError

from api.dispatch import UnusableText, start_message
from api.platforms.slack.actions import UnreadableInteraction, answer_presses, fresh_presses, read_payload_presses
from api.platforms.slack.automations import fire_from_message
from api.platforms.slack.commands import take_command
from api.platforms.slack.events import PLATFORM, SlackMessage, parse_message
from isolator.settings import ConfigurationError, Settings
from isolator.trust import SlackSender, admit_slack

log = logging.getLogger(__name__)

EVERY = re.compile(".*")
# Answers of presses still going on after their acknowledgement: kept so that none is collected midway.
_ANSWERING: set[asyncio.Task[None]] = set()


def build_bolt_app(settings: Settings, signing_secret: str | None) -> AsyncApp:
    """The app with every listener; `signing_secret` for HTTP, None over the socket (Slack's own connection)."""
    if settings.slack_bot_token is None:
        # Without it the bot can neither learn its own user id (auth.test) nor reply.
        needs = "SLACK_SIGNING_SECRET" if signing_secret is not None else "SLACK_APP_TOKEN"
        raise ConfigurationError(f"SLACK_BOT_TOKEN: required when {needs} is set")
    app = AsyncApp(
        name="isolator",
        signing_secret=signing_secret or "",
        request_verification_enabled=signing_secret is not None,
        # auth.test (run by bolt on the first event, for the bot's ids) goes to SLACK_API_URL too.
        client=AsyncWebClient(token=settings.slack_bot_token.get_secret_value(), base_url=settings.slack_api_url),
        # Run the listener before answering: it only starts a workflow (tens of ms, far inside
        # Slack's 3 s), and a 200 then means the work is recorded in Temporal.
        process_before_response=True,
    )

    async def on_mention(event: dict[str, Any], context: AsyncBoltContext) -> BoltResponse | None:
        return await take_message(settings, context, parse_message(event, context.bot_user_id))

    async def on_message(event: dict[str, Any], context: AsyncBoltContext) -> BoltResponse | None:
        message = parse_message(event, context.bot_user_id)
        if (unstarted := await fire_from_message(settings, context, app.client, message)) is not None:
            return unstarted  # an automation naming the channel (api/platforms/slack/automations.py) waits
        # Without a mention, only threads the bot is already in are its business (a refused sender's never are).
        if message is None or not await _bot_in_thread(context["pool"], message):
            return None
        return await take_message(settings, context, message)

    async def on_command(body: dict[str, Any], context: AsyncBoltContext) -> BoltResponse:
        return await take_command(settings, context["temporal"], context["pool"], app.client, body,
                                  context.team_id or "")

    async def on_press(body: dict[str, Any], context: AsyncBoltContext) -> BoltResponse:
        return await take_presses(settings, context["pool"], context["temporal"], app.client, body)

    # Every message event is taken, subtypes included, and filtered in parse_message: an event
    # no listener matches would be answered 404 by bolt, and Slack would retry it.
    app.event("app_mention")(on_mention)
    app.event("message")(on_message)
    app.command(EVERY)(on_command)
    app.block_action(EVERY)(on_press)
    return app


async def _bot_in_thread(pool: asyncpg.Pool, message: SlackMessage) -> bool:
    return bool(
        await pool.fetchval(
            "SELECT EXISTS (SELECT 1 FROM conversations WHERE platform = $1 AND platform_conversation_id = $2)",
            PLATFORM, message.conversation_id,
        )
    )


async def take_message(settings: Settings, context: AsyncBoltContext,
                       message: SlackMessage | None) -> BoltResponse | None:
    """Start the message's workflow; bolt then acknowledges the event."""
    if message is None:
        return None
    # The workspace the event was delivered for; the sender's own, unless the event names another.
    installed_team = context.team_id or ""
    sender = SlackSender(user=message.user, team=message.team or installed_team, installed_team=installed_team)
    try:
        await start_message(
            settings,
            context["temporal"],
            platform=PLATFORM,
            conversation_id=message.conversation_id,
            text=message.text,
            message_key=message.message_key,
            admission=admit_slack(sender, settings),
        )
    except UnusableText as error:
        return BoltResponse(status=400, body={"detail": f"cannot read the event: {error}"})
    except RPCError as error:
        # Temporal refused or is unreachable: not acknowledging makes Slack deliver the event again later.
        log.warning("slack message %s not started: %s", message.message_key, error)
        return BoltResponse(status=503, body={"detail": "cannot start the work now; retry later"})
    return None


async def take_presses(settings: Settings, pool: asyncpg.Pool, temporal: Client, slack: AsyncWebClient,
                       payload: dict[str, Any]) -> BoltResponse:
    """Record each press of our buttons once, then answer them after the acknowledgement (Slack wants it
    within 3 s, and an answer is a workflow update that may wait). A press seen before answers nothing."""
    try:
        presses = await fresh_presses(pool, read_payload_presses(payload))
    except UnreadableInteraction as error:
        return BoltResponse(status=400, body={"detail": f"cannot read the interaction: {error}"})
    if presses:
        answering = asyncio.create_task(answer_presses(settings, pool, temporal, slack, presses))
        _ANSWERING.add(answering)
        answering.add_done_callback(_ANSWERING.discard)
    return BoltResponse(status=200, body="")
