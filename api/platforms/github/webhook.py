"""POST /webhooks/github: GitHub webhook deliveries, verified with GITHUB_WEBHOOK_SECRET or the webhook secret
of the GitHub App the dashboard stored.

Each handled event becomes one MessageWorkflow keyed by the event's own ids (github_keys.py), not by
`X-GitHub-Delivery`, which the signature does not cover: a redelivery, or the same body posted again
under a new delivery id, is processed once. The workflow is started before GitHub gets its answer
(GitHub waits 10 s): an acknowledged delivery is never lost. See github_events for what is handled.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
from typing import Annotated

import asyncpg
from fastapi import APIRouter, Depends, Request, status
from fastapi.responses import JSONResponse
from temporalio.client import Client
from temporalio.service import RPCError

from activities.chat.platforms.github_app.credentials import credentials_of
from activities.results.pr_loop_start import start_loop
from api.deps import get_client, get_pool
from api.dispatch import UnusableText, start_message
from api.pr_loop import is_ours
from api.platforms.github.approvals import parse_answer, take_answer
from api.platforms.github.automations import fire_automations
from api.platforms.github.feedback import Feedback, parse_feedback
from api.platforms.github.events import (
    PLATFORM,
    GitHubMessage,
    Ignored,
    PayloadError,
    decode_payload,
    parse_event,
)
from api.platforms.github.installations import INSTALLATION_EVENTS, installation_event, note_installation
from api.platforms.github.keys import event_key
from api.platforms.seen_presses import first_press
from isolator import metrics
from isolator.settings import Settings
from isolator.trust import admit_github

log = logging.getLogger(__name__)

# GitHub's delivery ids are GUIDs. One is only logged, to find the delivery in GitHub's log: the signature
# does not cover it, so it names nothing here (github_keys.py).
_DELIVERY = re.compile(r"[A-Za-z0-9-]{1,64}")
_EVENT = re.compile(r"[a-z_]{1,64}")


def build_router(settings: Settings) -> APIRouter:
    credentials = credentials_of(settings)
    router = APIRouter(tags=["github"])

    @router.post("/webhooks/github")
    async def github_webhook(request: Request, client: Annotated[Client, Depends(get_client)],
                             pool: Annotated[asyncpg.Pool, Depends(get_pool)]) -> JSONResponse:
        body = await request.body()
        if not await signed_by_us(settings, body, request.headers.get("x-hub-signature-256")):
            # Never the header itself: a near miss may be a real secret's signature.
            log.warning("github delivery %r refused: missing or invalid X-Hub-Signature-256",
                        request.headers.get("x-github-delivery", "")[:64])
            metrics.SIGNATURE_FAILURES.labels("github").inc()
            return _answer(status.HTTP_401_UNAUTHORIZED, detail="missing or invalid X-Hub-Signature-256 signature")
        event = request.headers.get("x-github-event", "")
        delivery = request.headers.get("x-github-delivery", "")
        if not _EVENT.fullmatch(event):
            return _answer(status.HTTP_400_BAD_REQUEST, detail="missing or malformed X-GitHub-Event header")
        if not _DELIVERY.fullmatch(delivery):
            return _answer(status.HTTP_400_BAD_REQUEST, detail="missing or malformed X-GitHub-Delivery header")
        if event == "ping":  # sent once when the webhook is created
            return _answer(status.HTTP_200_OK, status="ignored", reason="ping")
        try:
            payload = decode_payload(body, request.headers.get("content-type", ""))
        except PayloadError as error:
            return _answer(status.HTTP_400_BAD_REQUEST, detail=f"cannot read the {event} payload: {error}")
        if event in INSTALLATION_EVENTS:
            return JSONResponse(await installation_event(event, payload, settings, pool, client))
        await note_installation(settings, pool, payload)
        mention = await credentials.mention()  # the App's `@<slug>`, else BOT_MENTION
        try:  # an automation's trigger (api/platforms/github/automations.py); the event goes on as before
            fired = await fire_automations(event, payload, settings, pool, client, mention)
        except RPCError as error:
            log.warning("github delivery %s not started: %s", delivery, error)
            return _answer(status.HTTP_503_SERVICE_UNAVAILABLE, detail="cannot start the work now; redeliver later")
        try:
            answer = parse_answer(event, payload, mention)
            feedback = _not_our_own(parse_feedback(event, payload), mention)
            parsed = parse_event(event, payload, mention) if feedback is None else feedback
            # What it starts is named by the body's own ids, never by the delivery's (the loop's events carry theirs).
            key = event_key(event, payload) if answer is not None or isinstance(parsed, GitHubMessage) else ""
        except PayloadError as error:
            return _answer(status.HTTP_400_BAD_REQUEST, detail=f"cannot read the {event} payload: {error}")
        if answer is not None:  # `/approve K7P2QX`: an answer to a request, not a message for the agent
            if not await first_press(pool, PLATFORM, key):
                return _answer(status.HTTP_200_OK, status="ignored", reason="this comment was taken already")
            outcome = await take_answer(answer, pool, client, settings)
            if outcome is None:
                return _answer(status.HTTP_200_OK, status="ignored", reason="the allow rule refuses the sender")
            return _answer(status.HTTP_200_OK, status="answered", outcome=outcome.outcome)
        try:
            if isinstance(parsed, Feedback):
                return await _start_loop(parsed, delivery, client, pool)
            if (event == "pull_request_review_comment" and not isinstance(parsed, Ignored)
                    and await is_ours(pool, *_pull_request_of(parsed.conversation_id))):
                # Its review's event carries it (a single comment is a review too): one run, not two.
                parsed = Ignored("a review comment on a pull request of ours: its review is answered")
        except RPCError as error:
            log.warning("github delivery %s not started: %s", delivery, error)
            return _answer(status.HTTP_503_SERVICE_UNAVAILABLE, detail="cannot start the work now; redeliver later")
        if isinstance(parsed, Ignored) and fired:
            return _answer(status.HTTP_202_ACCEPTED, status="fired", workflow_id=fired[0])
        if isinstance(parsed, Ignored):
            log.debug("github delivery %s (%s) ignored: %s", delivery, event, parsed.reason)
            return _answer(status.HTTP_200_OK, status="ignored", reason=parsed.reason)
        try:
            handle = await start_message(
                settings,
                client,
                platform=PLATFORM,
                conversation_id=parsed.conversation_id,
                text=parsed.text,
                message_key=key,
                hints=parsed.hints,
                kind=parsed.kind,
                admission=admit_github(parsed.sender, settings) if parsed.sender is not None else None,
            )
        except UnusableText as error:
            return _answer(status.HTTP_400_BAD_REQUEST, detail=f"cannot read the {event} payload: {error}")
        except RPCError as error:
            # Temporal is unreachable: a 5xx shows in GitHub's delivery log, where it can be redelivered.
            log.warning("github delivery %s not started: %s", delivery, error)
            return _answer(status.HTTP_503_SERVICE_UNAVAILABLE, detail="cannot start the work now; redeliver later")
        return _answer(status.HTTP_202_ACCEPTED, status="started", workflow_id=handle.id)

    async def _start_loop(feedback: Feedback, delivery: str, client: Client, pool: asyncpg.Pool) -> JSONResponse:
        if feedback.sender is not None and (refused := admit_github(feedback.sender, settings).refused) is not None:
            log.info("github delivery %s (review) refused: %s", delivery, refused)
            return _answer(status.HTTP_200_OK, status="ignored", reason=refused)
        if feedback.event.kind == "review" and feedback.event.number is not None and not await is_ours(
                pool, feedback.event.repository, feedback.event.number):
            return _answer(status.HTTP_200_OK, status="ignored",
                           reason="no conversation here works on this pull request")
        handle = await start_loop(settings, client, feedback.event)
        return _answer(status.HTTP_202_ACCEPTED, status="started", workflow_id=handle.id)

    return router


def _not_our_own(feedback: Feedback | Ignored | None, mention: str) -> Feedback | Ignored | None:
    """The bot's own review (`<slug>[bot]` as the App) asks nothing of it: no loop of the bot answering itself."""
    sender = feedback.sender if isinstance(feedback, Feedback) else None
    if sender is not None and sender.is_bot and sender.login.lower().removesuffix("[bot]") == mention.lstrip("@").lower():
        return Ignored("a review by this service")
    return feedback


async def signed_by_us(settings: Settings, body: bytes, header: str | None) -> bool:
    """Signed with GITHUB_WEBHOOK_SECRET, or with the webhook secret of the App the dashboard stored (read
    again on a miss, so an App connected a moment ago is known without a restart)."""
    if settings.github_webhook_secret is not None and signature_matches(
            settings.github_webhook_secret.get_secret_value().encode(), body, header):
        return True
    credentials = credentials_of(settings)
    for refresh in (False, True):
        app = await credentials.app(refresh=refresh and credentials.may_refresh())
        if app is not None and app.webhook_secret and signature_matches(app.webhook_secret.encode(), body, header):
            return True
    return False


def _pull_request_of(conversation_id: str) -> tuple[str, int]:
    repository, number = conversation_id.rsplit("#", 1)
    return repository, int(number)


def signature_matches(secret: bytes, body: bytes, header: str | None) -> bool:
    """`X-Hub-Signature-256` is `sha256=` and the hex HMAC-SHA256 of the raw body; compared in constant time."""
    if not header:
        return False
    expected = "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected.encode(), header.encode())


def _answer(code: int, **content: str) -> JSONResponse:
    return JSONResponse(content, status_code=code)
