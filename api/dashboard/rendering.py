"""The dashboard's templates and how a page is answered: escaped always, never cached, never framed,
and nothing but this server's own scripts and styles (the Content-Security-Policy says so)."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Coroutine
from urllib.parse import urlencode

import jinja2
from markupsafe import Markup, escape
from fastapi import Request
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates

from api.dashboard.access import COOKIE, LOGIN, LoginNeeded, Refused, Session
from workflows.chat.worktree_texts import human_size

HERE = Path(__file__).parent
STATIC = HERE / "static"

HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                               "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",  # "no-referrer" would make the browser send `Origin: null` with our own forms
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
}


def _ago(moment: datetime | None) -> str:
    return "never" if moment is None else f"{_elapsed(moment)} ago"


def _elapsed(moment: datetime) -> str:
    """The time since `moment`, in its largest whole unit: `3 min`."""
    seconds = int((datetime.now(timezone.utc) - moment).total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds // size} {unit}"
    return f"{max(seconds, 0)} s"


def _size(size: int | None) -> str:
    """A recorded disk use; when it will be recorded is said once a page (macros.html `unmeasured`)."""
    return human_size(size) if size is not None else "not measured yet"


_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def _chat(text: str) -> Markup:
    """Text worded for chat, on a page: its `code` spans as <code>, and everything escaped."""
    parts = _CODE_SPAN.split(text)
    return Markup("").join(Markup("<code>{}</code>").format(part) if index % 2 else escape(part)
                           for index, part in enumerate(parts))


def _usd(amount: float) -> str:
    return f"${amount:,.2f}" if amount >= 0.01 or amount == 0 else f"${amount:.4f}"  # a cheap run is not $0.00


def _when(moment: datetime | None) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC") if moment else ""


_environment = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
                                  undefined=jinja2.StrictUndefined)
_environment.filters.update(ago=_ago, chat=_chat, elapsed=_elapsed, size=_size, usd=_usd, when=_when)
templates = Jinja2Templates(env=_environment)


def render(request: Request, session: Session, name: str, status_code: int = 200, **context: Any) -> Response:
    response = templates.TemplateResponse(request, name, {"session": session, **context}, status_code=status_code,
                                          headers=HEADERS)
    new_cookie = getattr(request.state, "new_cookie", None)
    if new_cookie:
        set_session_cookie(request, response, new_cookie)
    return response


def set_session_cookie(request: Request, response: Response, value: str) -> None:
    """The cookie lasts as long as the session; it is sent over HTTPS only when users reach the server so
    (behind a TLS proxy, the request itself comes in over plain HTTP)."""
    settings = request.app.state.settings
    secure = request.url.scheme == "https" or (settings.public_url or "").startswith("https://")
    response.set_cookie(COOKIE, value, max_age=round(settings.session_hours * 3600), httponly=True,
                        samesite="strict", secure=secure, path="/")


TITLES = {400: "Bad request", 404: "Not found"}


def refused_page(request: Request, error: Exception) -> Response:
    assert isinstance(error, Refused)
    html = templates.get_template("refused.html").render(title=TITLES.get(error.status_code, "Refused"),
                                                        message=error.message)
    return HTMLResponse(html, status_code=error.status_code, headers=HEADERS)


def login_redirect(request: Request, error: Exception) -> Response:
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    if request.method != "GET":
        return refused_page(request, Refused(401, "Log in first: this action needs the dashboard's session."))
    return RedirectResponse(f"{LOGIN}?{urlencode({'next': target})}", status_code=303, headers=HEADERS)


class PageRoute(APIRoute):
    """A dashboard route: a request it cannot take is answered with an HTML page, never FastAPI's 422 JSON
    (the app's JSON handler is for the REST API). A malformed id in the path is a page that is not there."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def page_handler(request: Request) -> Response:
            try:
                return await handler(request)
            except RequestValidationError as error:
                places = [problem.get("loc", ()) for problem in error.errors()]
                if any(place and place[0] == "path" for place in places):
                    raise Refused(404, f"No such page: {request.url.path}") from None
                names = ", ".join(sorted({str(place[-1]) for place in places if place}))
                raise Refused(400, f"This page does not take that value of {names}.") from None

        return page_handler


def install_handlers(app: Any) -> None:
    app.add_exception_handler(Refused, refused_page)
    app.add_exception_handler(LoginNeeded, login_redirect)
