"""POST /webhooks/slack: Slack's Events API through slack-bolt, verified with SLACK_SIGNING_SECRET.

Answered: `url_verification` (bolt returns the challenge), `app_mention` anywhere, and `message`
events in threads the bot already takes part in. Each message becomes one MessageWorkflow keyed by
the message itself, `channel:ts`, not by `event_id`: the `app_mention` and `message` copies of one
message (two events, two `event_id`s), Slack's retries and a replay of the signed request are then
processed once. The workflow is started before Slack gets its 200: an acknowledged event is never lost.

POST /webhooks/slack/interactions: presses of a request's buttons (api/platforms/slack/actions.py),
signed the same way; acknowledged at once, answered after, each press once (by its user and `action_ts`).
"""

from __future__ import annotations

import json
import logging
from typing import Annotated, Any

import asyncpg
from fastapi import APIRouter, BackgroundTasks, Depends, Request, Response, status
from fastapi.responses import JSONResponse
from slack_bolt.adapter.fastapi.async_handler import AsyncSlackRequestHandler
from slack_bolt.async_app import AsyncApp, AsyncBoltContext, AsyncBoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web.async_client import AsyncWebClient
from starlette.datastructures import Headers
from temporalio.client import Client
from temporalio.service import RPCError

from api.deps import get_client, get_pool
from api.dispatch import UnusableText, start_message
from api.platforms.seen_presses import first_press
from api.platforms.slack.actions import UnreadableInteraction, answer_presses, read_presses
from api.platforms.slack.events import PLATFORM, SlackMessage, parse_message
from isolator.settings import ConfigurationError, Settings
from isolator.trust import SlackSender, admit_slack

log = logging.getLogger(__name__)


def build_router(settings: Settings) -> APIRouter:
    assert settings.slack_signing_secret is not None, "mounted only when SLACK_SIGNING_SECRET is set"
    signing_secret = settings.slack_signing_secret.get_secret_value()
    verifier = SignatureVerifier(signing_secret)
    bolt_app = _bolt_app(settings, signing_secret)
    handler = AsyncSlackRequestHandler(bolt_app)
    router = APIRouter(tags=["slack"])

    @router.post("/webhooks/slack")
    async def slack_events(
        request: Request,
        client: Annotated[Client, Depends(get_client)],
        pool: Annotated[asyncpg.Pool, Depends(get_pool)],
    ) -> Response:
        refusal = _refusal(verifier, request.headers, await request.body())
        if refusal is not None:
            return refusal
        return await handler.handle(request, {"temporal": client, "pool": pool})

    @router.post("/webhooks/slack/interactions")
    async def slack_interactions(
        request: Request,
        background: BackgroundTasks,
        client: Annotated[Client, Depends(get_client)],
        pool: Annotated[asyncpg.Pool, Depends(get_pool)],
    ) -> Response:
        text = _signed_text(verifier, request.headers, await request.body())
        if isinstance(text, Response):
            return text
        try:
            presses = read_presses(text)
        except UnreadableInteraction as error:
            return _error(status.HTTP_400_BAD_REQUEST, f"cannot read the interaction: {error}")
        # A press posted again (the signature holds for five minutes) is acknowledged and answers nothing.
        presses = [item for item in presses if await first_press(pool, PLATFORM, item.key)]
        # Slack wants its 200 within 3 s: the answers (a workflow update each) come after it.
        background.add_task(answer_presses, settings, pool, client, bolt_app.client, presses)
        return Response(status_code=status.HTTP_200_OK)

    return router


def _refusal(verifier: SignatureVerifier, headers: Headers, body: bytes) -> Response | None:
    """Refuse what bolt cannot take safely.

    Bolt parses the body before its own signature check runs, and answers 500 to a body that is
    not UTF-8 JSON or to a non-numeric timestamp. So the signature is checked here first, and only a
    signed JSON object reaches bolt, which verifies it again.
    """
    text = _signed_text(verifier, headers, body)
    if isinstance(text, Response):
        return text
    try:
        payload = json.loads(text)
    except ValueError:
        payload = None
    if not isinstance(payload, dict) or not isinstance(payload.get("event", {}), dict):
        return _error(status.HTTP_400_BAD_REQUEST, "expected an Events API JSON payload")
    try:
        # Bolt reads ids from the payload as it builds its request, assuming their shapes (a 500 otherwise).
        AsyncBoltRequest(body=text, headers=dict(headers))
    except Exception:  # any shape bolt cannot read is the sender's error
        return _error(status.HTTP_400_BAD_REQUEST, "the Events API payload has fields of unexpected types")
    return None


def _signed_text(verifier: SignatureVerifier, headers: Headers, body: bytes) -> str | Response:
    """The body, when Slack signed it (`v0:{timestamp}:{body}`, compared in constant time, 5 minutes of
    clock skew); otherwise the refusal to answer."""
    timestamp = headers.get("x-slack-request-timestamp", "")
    signature = headers.get("x-slack-signature", "")
    unsigned = _error(
        status.HTTP_401_UNAUTHORIZED,
        "missing, invalid or expired Slack signature (X-Slack-Signature, X-Slack-Request-Timestamp)",
    )
    if not timestamp.isdigit() or not signature:
        log.warning("slack request refused: no X-Slack-Signature or X-Slack-Request-Timestamp")
        return unsigned
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return _error(status.HTTP_400_BAD_REQUEST, "the body is not UTF-8")
    if not verifier.is_valid(text, timestamp, signature):
        log.warning("slack request refused: invalid or expired signature (timestamp %s)", timestamp[:20])
        return unsigned
    return text


def _error(code: int, detail: str) -> Response:
    return JSONResponse({"detail": detail}, status_code=code)


def _bolt_app(settings: Settings, signing_secret: str) -> AsyncApp:
    if settings.slack_bot_token is None:
        # Without it the bot can neither learn its own user id (auth.test) nor reply.
        raise ConfigurationError("SLACK_BOT_TOKEN: required when SLACK_SIGNING_SECRET is set")
    app = AsyncApp(
        name="isolator",
        signing_secret=signing_secret,
        # auth.test (run by bolt on the first event, for the bot's ids) goes to SLACK_API_URL too.
        client=AsyncWebClient(token=settings.slack_bot_token.get_secret_value(), base_url=settings.slack_api_url),
        # Run the listener before answering: it only starts a workflow (tens of ms, far inside
        # Slack's 3 s), and a 200 then means the work is recorded in Temporal.
        process_before_response=True,
    )

    async def on_mention(event: dict[str, Any], context: AsyncBoltContext) -> BoltResponse | None:
        return await _take(settings, context, parse_message(event, context.bot_user_id))

    async def on_message(event: dict[str, Any], context: AsyncBoltContext) -> BoltResponse | None:
        message = parse_message(event, context.bot_user_id)
        # Without a mention, only threads the bot is already in are its business (a refused sender's never are).
        if message is None or not await _bot_in_thread(context["pool"], message):
            return None
        return await _take(settings, context, message)

    # Every message event is taken, subtypes included, and filtered in parse_message: an event
    # no listener matches would be answered 404 by bolt, and Slack would retry it.
    app.event("app_mention")(on_mention)
    app.event("message")(on_message)
    return app


async def _bot_in_thread(pool: asyncpg.Pool, message: SlackMessage) -> bool:
    return bool(
        await pool.fetchval(
            "SELECT EXISTS (SELECT 1 FROM conversations WHERE platform = $1 AND platform_conversation_id = $2)",
            PLATFORM, message.conversation_id,
        )
    )


async def _take(settings: Settings, context: AsyncBoltContext, message: SlackMessage | None) -> BoltResponse | None:
    """Start the message's workflow; bolt then acknowledges the event."""
    if message is None:
        return None
    # The workspace the signed event was delivered for; the sender's own, unless the event names another.
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
