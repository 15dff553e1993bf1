"""`/login`: with API_TOKEN set, the token once, for a session cookie; `/logout` ends it."""

from __future__ import annotations

import logging
from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import RedirectResponse, Response

from api.dashboard.access import COOKIE, Session, access_of, actor, check_same_origin, form_of, safe_next
from api.dashboard.rendering import HEADERS, set_session_cookie, templates

log = logging.getLogger(__name__)

router = APIRouter()


@router.get("/login", include_in_schema=False)
async def login_form(request: Request, next_path: Annotated[str, Query(alias="next", max_length=2000)] = "/") -> Response:
    if access_of(request).token is None:
        return RedirectResponse(safe_next(next_path), status_code=303, headers=HEADERS)
    return templates.TemplateResponse(request, "login.html", {"next": safe_next(next_path), "wrong": False},
                                      headers=HEADERS)


@router.post("/login", include_in_schema=False)
async def login(request: Request) -> Response:
    check_same_origin(request)
    form = await form_of(request)
    access = access_of(request)
    target = safe_next(form.get("next"))
    if not access.token_matches(form.get("token", "")):
        log.warning("dashboard login refused: wrong token")  # never the token
        return templates.TemplateResponse(request, "login.html", {"next": target, "wrong": True}, status_code=401,
                                          headers=HEADERS)
    _, cookie = access.new_cookie()
    response = RedirectResponse(target, status_code=303, headers=HEADERS)
    set_session_cookie(request, response, cookie)
    return response


@router.post("/logout", include_in_schema=False)
async def logout(request: Request, form: Annotated[dict[str, str], Depends(actor)]) -> Response:
    response = RedirectResponse("/login", status_code=303, headers=HEADERS)
    response.delete_cookie(COOKIE, path="/")
    return response
