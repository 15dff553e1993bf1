"""`/login`: with API_TOKEN set, the token once, for a session cookie; `/logout` ends the session."""

from __future__ import annotations

import logging
import math
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import RedirectResponse, Response

from api.dashboard.access import COOKIE, access_of, actor, check_same_origin, form_of, safe_next
from api.dashboard.rendering import HEADERS, set_session_cookie, templates
from api.dashboard.sessions import close_session, open_session
from api.deps import client_address, get_pool, get_settings, token_throttle

log = logging.getLogger(__name__)

router = APIRouter()


@router.get("/login", include_in_schema=False)
async def login_form(request: Request, next_path: Annotated[str, Query(alias="next", max_length=2000)] = "/") -> Response:
    if access_of(request).token is None:
        return RedirectResponse(safe_next(next_path), status_code=303, headers=HEADERS)
    return _form(request, safe_next(next_path))


@router.post("/login", include_in_schema=False)
async def login(request: Request) -> Response:
    check_same_origin(request)
    form = await form_of(request)
    access, throttle, address = access_of(request), token_throttle(request), client_address(request)
    target = safe_next(form.get("next"))
    locked_for = throttle.locked_for(address)
    if locked_for:
        log.warning("dashboard login refused: %s is locked out for %.0f s after wrong tokens", address, locked_for)
        return _form(request, target, wait=math.ceil(locked_for), status_code=429)
    if not access.token_matches(form.get("token", "")):
        throttle.failed(address)
        log.warning("dashboard login refused: wrong token")  # never the token
        return _form(request, target, wrong=True, status_code=401)
    throttle.succeeded(address)
    session_id, cookie = access.new_cookie()
    await open_session(await get_pool(request), session_id, (await get_settings(request)).session_hours)
    response = RedirectResponse(target, status_code=303, headers=HEADERS)
    set_session_cookie(request, response, cookie)
    return response


@router.post("/logout", include_in_schema=False)
async def logout(request: Request, form: Annotated[dict[str, str], Depends(actor)]) -> Response:
    await close_session(await get_pool(request), request.state.session.id)  # the cookie is refused from now on
    response = RedirectResponse("/login", status_code=303, headers=HEADERS)
    response.delete_cookie(COOKIE, path="/")
    return response


def _form(request: Request, target: str, *, wrong: bool = False, wait: int = 0, status_code: int = 200) -> Response:
    headers = {**HEADERS, "Retry-After": str(wait)} if wait else HEADERS
    return templates.TemplateResponse(request, "login.html", {"next": target, "wrong": wrong, "wait": wait},
                                      status_code=status_code, headers=headers)
