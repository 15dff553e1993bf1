"""`POST /webhooks/automations/<name>`: a monitoring tool fires an automation (`on = ["webhook:call"]`).

Each automation has a key of its own, derived from ISOLATOR_SECRET_KEY as HMAC(key, "automation-webhook:<name>"):
one automation's key fires no other, and none is stored. The sender signs the raw body with it,
HMAC-SHA256 in `X-Isolator-Signature: sha256=<hex>`, checked in constant time before anything else (so a
stranger learns nothing, not even which names exist). `GET /api/automations/<name>/webhook` shows the
operator the key, with a curl example.

The body's top-level string fields become `{{ event.* }}` in the prompt (a body that is not a JSON object
is `{{ event.body }}`). The firing's id is `X-Isolator-Delivery` when given, else the body's digest: a
redelivery fires once.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
from typing import Annotated, Any

import asyncpg
from fastapi import APIRouter, Depends, HTTPException, Request, status
from fastapi import Path as PathParameter
from fastapi.responses import JSONResponse
from temporalio.client import Client
from temporalio.service import RPCError

from activities.automations.records import AutomationRecords, StoredAutomation
from api.automations import start_firing
from api.deps import get_client, get_pool, get_settings, require_api_token
from isolator import metrics
from isolator.automation_rules import NAME
from isolator.contracts.automation import FiringInput
from isolator.settings import Settings

log = logging.getLogger(__name__)

SIGNATURE_HEADER = "X-Isolator-Signature"
DELIVERY_HEADER = "X-Isolator-Delivery"
TRIGGER = "webhook:call"
_DELIVERY = re.compile(r"[A-Za-z0-9._-]{1,100}")
_FIELD_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
MAX_FIELDS = 50
MAX_FIELD = 20000  # characters of one field; the rendered prompt has its own bound
NO_KEY = ("automation webhooks need ISOLATOR_SECRET_KEY (each automation's key is derived from it): "
          "`isolator secret-key` prints one; set it in the environment of the API and the workers")

Name = Annotated[str, PathParameter(pattern=NAME.pattern)]
webhook_router = APIRouter(tags=["automations"])
key_router = APIRouter(prefix="/api/automations", tags=["automations"], dependencies=[Depends(require_api_token)])


def webhook_key(settings: Settings, name: str) -> str | None:
    """The automation's own signing key (hex), or None without ISOLATOR_SECRET_KEY."""
    if settings.isolator_secret_key is None:
        return None
    secret = settings.isolator_secret_key.get_secret_value().encode()
    return hmac.new(secret, f"automation-webhook:{name}".encode(), hashlib.sha256).hexdigest()


def signature_of(key: str, body: bytes) -> str:
    return "sha256=" + hmac.new(key.encode(), body, hashlib.sha256).hexdigest()


def event_fields(body: bytes) -> dict[str, str]:
    """A JSON object's top-level string fields (named like identifiers, bounded); any other body as `body`."""
    try:
        payload = json.loads(body)
    except ValueError:
        payload = None
    if not isinstance(payload, dict):
        return {"body": body.decode("utf-8", errors="replace")[:MAX_FIELD]}
    fields = {key: value[:MAX_FIELD] for key, value in payload.items()
              if isinstance(value, str) and _FIELD_NAME.fullmatch(key)}
    return dict(list(fields.items())[:MAX_FIELDS])


def _answer(code: int, **body: Any) -> JSONResponse:
    return JSONResponse(body, status_code=code)


async def _called(pool: asyncpg.Pool, name: str) -> StoredAutomation | None:
    """The automation when it takes webhook calls; None as if unknown otherwise."""
    stored = await AutomationRecords(pool).get(name)
    if stored is None or not any(trigger.spelled() == TRIGGER for trigger in stored.automation.triggers):
        return None
    return stored


@webhook_router.post("/webhooks/automations/{name}")
async def call_automation(name: Name, request: Request, pool: Annotated[asyncpg.Pool, Depends(get_pool)],
                          client: Annotated[Client, Depends(get_client)],
                          settings: Annotated[Settings, Depends(get_settings)]) -> JSONResponse:
    key = webhook_key(settings, name)
    if key is None:  # nothing can be signed: as if there were no such route
        return _answer(status.HTTP_404_NOT_FOUND, detail=NO_KEY)
    body = await request.body()
    given = request.headers.get(SIGNATURE_HEADER, "")
    if not hmac.compare_digest(given.encode(), signature_of(key, body).encode()):
        log.warning("automation webhook %s refused: missing or invalid %s", name, SIGNATURE_HEADER)
        metrics.SIGNATURE_FAILURES.labels("automation").inc()
        return _answer(status.HTTP_401_UNAUTHORIZED, detail=f"missing or invalid {SIGNATURE_HEADER} "
                                                            "(sha256=<hex HMAC-SHA256 of the body with the automation's key>)")
    delivery = request.headers.get(DELIVERY_HEADER)
    if delivery is not None and not _DELIVERY.fullmatch(delivery):
        return _answer(status.HTTP_400_BAD_REQUEST,
                       detail=f"{DELIVERY_HEADER} must be 1 to 100 letters, digits, `.`, `_` or `-`")
    stored = await _called(pool, name)
    if stored is None:
        return _answer(status.HTTP_404_NOT_FOUND, detail=f"no automation `{name}` takes webhook calls "
                                                         f"(`on = [\"{TRIGGER}\"]`)")
    if settings.automations == "off":
        return _answer(status.HTTP_200_OK, status="ignored", reason="automations are switched off (AUTOMATIONS=off)")
    if stored.paused:
        return _answer(status.HTTP_200_OK, status="ignored", reason=f"`{name}` is paused")
    event_id = f"webhook-{delivery}" if delivery else f"webhook-{hashlib.sha256(body).hexdigest()[:20]}"
    firing = FiringInput(name, trigger=TRIGGER, event_id=event_id, event=event_fields(body))
    try:
        workflow_id = await start_firing(client, settings, firing, event_id)
    except RPCError as error:
        log.warning("automation webhook %s not started: %s", name, error)
        return _answer(status.HTTP_503_SERVICE_UNAVAILABLE, detail="cannot start the work now; call again later")
    log.info("automation %s fired by a webhook call (%s)", name, event_id)
    return _answer(status.HTTP_202_ACCEPTED, status="fired", workflowId=workflow_id)


@key_router.get("/{name}/webhook")
async def automation_webhook_key(name: Name, request: Request, pool: Annotated[asyncpg.Pool, Depends(get_pool)],
                                 settings: Annotated[Settings, Depends(get_settings)]) -> dict[str, str]:
    """The automation's webhook URL and signing key, and a curl call that fires it."""
    if await _called(pool, name) is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"no automation `{name}` takes webhook calls: add "
                                                       f"`on = [\"{TRIGGER}\"]` to it")
    key = webhook_key(settings, name)
    if key is None:  # the service's set-up, not the request, is what is missing
        raise HTTPException(status.HTTP_409_CONFLICT, NO_KEY)
    base = (settings.public_url or str(request.base_url)).rstrip("/")
    url = f"{base}/webhooks/automations/{name}"
    curl = ("body='{\"title\": \"disk full on db-1\", \"body\": \"93% used\"}'\n"
            f"signature=$(printf %s \"$body\" | openssl dgst -sha256 -hmac '{key}' | sed 's/^.* //')\n"
            f"curl -X POST '{url}' -H 'Content-Type: application/json' "
            f"-H \"{SIGNATURE_HEADER}: sha256=$signature\" -H '{DELIVERY_HEADER}: alert-1' -d \"$body\"")
    return {"url": url, "key": key, "signatureHeader": f"{SIGNATURE_HEADER}: sha256=<hex HMAC-SHA256 of the raw "
                                                       "body with the key>",
            "deliveryHeader": f"{DELIVERY_HEADER}: <your event's id> (optional: a redelivery fires once)",
            "curl": curl}
