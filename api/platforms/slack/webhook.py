"""POST /webhooks/slack: Slack's Events API through slack-bolt, verified with SLACK_SIGNING_SECRET.

Answered: `url_verification` (bolt returns the challenge), `app_mention` anywhere, and `message`
events in threads the bot already takes part in, by the listeners Socket Mode uses too
(api/platforms/slack/listeners.py). Each message becomes one MessageWorkflow keyed by
the message itself, `channel:ts`, not by `event_id`: the `app_mention` and `message` copies of one
message (two events, two `event_id`s), Slack's retries and a replay of the signed request are then
processed once. The workflow is started before Slack gets its 200: an acknowledged event is never lost.

POST /webhooks/slack/interactions: presses of a request's buttons (api/platforms/slack/actions.py),
signed the same way; acknowledged at once, answered after, each press once (by its user and `action_ts`).
"""

from __future__ import annotations

import json
import logging
from typing import Annotated

import asyncpg
from fastapi import APIRouter, BackgroundTasks, Depends, Request, Response, status
from fastapi.responses import JSONResponse
from slack_bolt.adapter.fastapi.async_handler import AsyncSlackRequestHandler
from slack_bolt.async_app import AsyncBoltRequest
from slack_sdk.signature import SignatureVerifier
from starlette.datastructures import Headers
from temporalio.client import Client

from api.deps import get_client, get_pool
from api.platforms.slack.actions import UnreadableInteraction, answer_presses, fresh_presses, read_presses
from api.platforms.slack.listeners import build_bolt_app
from isolator import metrics
from isolator.settings import Settings

log = logging.getLogger(__name__)


def build_router(settings: Settings) -> APIRouter:
    assert settings.slack_signing_secret is not None, "mounted only when SLACK_SIGNING_SECRET is set"
    signing_secret = settings.slack_signing_secret.get_secret_value()
    verifier = SignatureVerifier(signing_secret)
    bolt_app = build_bolt_app(settings, signing_secret)
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
            # A press posted again (the signature holds for five minutes) is acknowledged and answers nothing.
            presses = await fresh_presses(pool, read_presses(text))
        except UnreadableInteraction as error:
            return _error(status.HTTP_400_BAD_REQUEST, f"cannot read the interaction: {error}")
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
        metrics.SIGNATURE_FAILURES.labels("slack").inc()
        return unsigned
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return _error(status.HTTP_400_BAD_REQUEST, "the body is not UTF-8")
    if not verifier.is_valid(text, timestamp, signature):
        log.warning("slack request refused: invalid or expired signature (timestamp %s)", timestamp[:20])
        metrics.SIGNATURE_FAILURES.labels("slack").inc()
        return unsigned
    return text


def _error(code: int, detail: str) -> Response:
    return JSONResponse({"detail": detail}, status_code=code)
