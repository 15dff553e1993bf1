"""`/connect/github`: the GitHub App in one page (docs/platforms.md#connect-github). The page posts an App
manifest (the permissions and events the service needs, its webhook at PUBLIC_URL, this page's callback) to
GitHub; GitHub makes the App and sends the browser back with a code; the callback exchanges it for the App's
id, key and webhook secret and stores them encrypted with ISOLATOR_SECRET_KEY. Every process uses the App
from then on, with no restart.

The callback is reached from GitHub's site, and the session cookie (SameSite=Strict) does not come along:
its authority is the `state` the page signed (for this dashboard, for an hour), not the session."""

from __future__ import annotations

import json
import re
import secrets
import time
from typing import Annotated

import asyncpg
from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import RedirectResponse, Response

from activities.chat.platforms.github_app.credentials import credentials_of
from activities.chat.platforms.github_app.manifest import ConversionFailed, convert, manifest, site_of
from activities.chat.platforms.github_app.stored import SecretKeyError, store_app
from api.dashboard.access import Refused, Session, access_of, viewer
from api.dashboard.rendering import HEADERS, PageRoute, render
from api.deps import get_pool, get_settings
from isolator.settings import Settings

router = APIRouter(route_class=PageRoute)

STATE_SECONDS = 3600  # GitHub's code lives an hour too
_ORGANIZATION = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})")
_CODE = re.compile(r"[A-Za-z0-9_-]{1,200}")


@router.get("/connect/github", include_in_schema=False)
async def connect_page(
    request: Request,
    session: Annotated[Session, Depends(viewer)],
    settings: Annotated[Settings, Depends(get_settings)],
    organization: Annotated[str, Query(max_length=39)] = "",
) -> Response:
    if organization and not _ORGANIZATION.fullmatch(organization):
        raise Refused(400, "That is not a GitHub organization's name (letters, digits and dashes).")
    app = await credentials_of(settings).app(refresh=True)
    site = site_of(settings.github_api_url)
    owner = f"/organizations/{organization}" if organization else ""
    base = str(request.base_url).rstrip("/")
    the_manifest = manifest(settings.public_url or base, f"isolator-{settings.host}"[:34])
    the_manifest["redirect_url"] = f"{base}/connect/github/callback"  # where this browser reaches the dashboard
    response = render(request, session, "connect_github.html", app=app, settings=settings, organization=organization,
                      action=f"{site}{owner}/settings/apps/new?state={_state(request)}",
                      manifest=json.dumps(the_manifest), has_key=settings.isolator_secret_key is not None)
    # The form goes to GitHub: the page's policy lets it, and only there.
    response.headers["Content-Security-Policy"] = HEADERS["Content-Security-Policy"].replace(
        "form-action 'self'", f"form-action 'self' {site}")
    return response


@router.get("/connect/github/callback", include_in_schema=False)
async def connect_callback(
    request: Request,
    settings: Annotated[Settings, Depends(get_settings)],
    pool: Annotated[asyncpg.Pool, Depends(get_pool)],
    code: Annotated[str, Query(max_length=200)] = "",
    state: Annotated[str, Query(max_length=200)] = "",
) -> Response:
    if not _state_holds(request, state):
        raise Refused(400, "This link was not started from this dashboard's Connect GitHub page, or is older than "
                           "an hour: start again from /connect/github.")
    if not _CODE.fullmatch(code):
        raise Refused(400, "GitHub's answer has no code: start again from /connect/github.")
    if settings.isolator_secret_key is None:
        raise Refused(400, "ISOLATOR_SECRET_KEY is not set, so the App's key cannot be stored: run "
                           "`isolator secret-key`, set ISOLATOR_SECRET_KEY to what it prints, restart, start again.")
    try:
        app = await convert(settings.github_api_url, code)
        await store_app(pool, settings.isolator_secret_key.get_secret_value(), app.app_id, app.slug, app.html_url,
                        {"pem": app.pem, "webhook_secret": app.webhook_secret, "client_id": app.client_id,
                         "client_secret": app.client_secret})
    except (ConversionFailed, SecretKeyError) as error:
        raise Refused(400, f"The App was not stored: {error}.") from None
    await credentials_of(settings).app(refresh=True)
    return RedirectResponse("/connect/github?connected=1", status_code=303, headers=HEADERS)


def _state(request: Request) -> str:
    nonce, until = secrets.token_urlsafe(16), str(int(time.time()) + STATE_SECONDS)
    return f"{nonce}.{until}.{access_of(request).sign(f'{nonce}.{until}', 'github-manifest')}"


def _state_holds(request: Request, state: str) -> bool:
    nonce, _, rest = state.partition(".")
    until, _, signature = rest.partition(".")
    if not nonce or not until.isdigit() or int(until) < time.time():
        return False
    return secrets.compare_digest(signature, access_of(request).sign(f"{nonce}.{until}", "github-manifest"))
