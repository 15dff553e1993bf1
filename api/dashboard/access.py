"""Who may see the dashboard and act from it.

With API_TOKEN set, a login form asks for the token once (wrong tokens are throttled: throttle.py) and
sets a session cookie (HttpOnly, SameSite=Strict) signed with a key derived from the token; the session
is also recorded in PostgreSQL (sessions.py), so that its expiry and its logout hold in every API
process. With no token, only loopback clients are served, and every page says so. Every action is a
form post that must carry the session's CSRF token and come from the dashboard's own origin: a form on
another site (even another port of this host, which SameSite counts as the same site) is refused by its
Origin.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

from fastapi import Request, status

from api.dashboard.sessions import session_is_open
from api.deps import is_loopback_client
from isolator.settings import Settings

log = logging.getLogger(__name__)

COOKIE = "isolator_session"
LOGIN = "/login"


class LoginNeeded(Exception):
    """No valid session: the page answers with a redirect to the login form."""


class Refused(Exception):
    """A request the dashboard does not serve: an HTML page that says why."""

    def __init__(self, status_code: int, message: str) -> None:
        super().__init__(message)
        self.status_code, self.message = status_code, message


@dataclass(frozen=True)
class Session:
    id: str
    csrf: str
    loopback_only: bool  # no API_TOKEN: the page says that only this machine is served


class Access:
    def __init__(self, settings: Settings) -> None:
        token = settings.api_token.get_secret_value() if settings.api_token else None
        self.token = token
        # With a token, cookies survive restarts and hold across API processes; without, they last a process.
        self.key = hashlib.sha256(b"isolator dashboard:" + token.encode()).digest() if token else secrets.token_bytes(32)

    def sign(self, value: str, purpose: str) -> str:
        return hmac.new(self.key, f"{purpose}:{value}".encode(), hashlib.sha256).hexdigest()

    def token_matches(self, given: str) -> bool:
        return self.token is not None and secrets.compare_digest(given.encode(), self.token.encode())

    def new_cookie(self) -> tuple[str, str]:
        """A fresh session: its id, and the cookie value that proves it."""
        session_id = secrets.token_urlsafe(24)
        return session_id, f"{session_id}.{self.sign(session_id, 'session')}"

    def session_of(self, request: Request) -> str | None:
        session_id, _, signature = request.cookies.get(COOKIE, "").partition(".")
        if session_id and hmac.compare_digest(signature, self.sign(session_id, "session")):
            return session_id
        return None


def access_of(request: Request) -> Access:
    return request.app.state.dashboard_access


async def viewer(request: Request) -> Session:
    """Every page's dependency: the session, or a refusal (no token and not loopback), or the login."""
    access = access_of(request)
    if access.token is None and not is_loopback_client(request):
        raise Refused(status.HTTP_403_FORBIDDEN, "The dashboard is served only to this machine's loopback address "
                      "while API_TOKEN is unset: set API_TOKEN to serve it to others.")
    session_id = access.session_of(request)
    if session_id and access.token and not await session_is_open(request.app.state.pool, session_id):
        session_id = None  # expired, or logged out
    if session_id is None:
        if access.token is not None:
            raise LoginNeeded()
        session_id, cookie = access.new_cookie()  # loopback: a session for the CSRF token, no login
        request.state.new_cookie = cookie
    request.state.session = Session(session_id, access.sign(session_id, "csrf"), loopback_only=access.token is None)
    return request.state.session


async def form_of(request: Request) -> dict[str, str]:
    """A small url-encoded form's fields (the last of each name)."""
    body = (await request.body())[:64 * 1024].decode(errors="replace")
    return {name: values[-1] for name, values in parse_qs(body, keep_blank_values=True).items()}


def check_same_origin(request: Request) -> None:
    """A form posted from another origin is refused, whatever it carries."""
    origin = request.headers.get("origin")
    fetch_site = request.headers.get("sec-fetch-site")
    host = request.headers.get("host", "")
    if (origin is not None and urlsplit(origin).netloc != host) or fetch_site in ("cross-site", "same-site"):
        log.warning("%s %s refused: posted from another origin (%s)", request.method, request.url.path, origin)
        raise Refused(status.HTTP_403_FORBIDDEN, "Refused: this form was posted from another site.")


async def actor(request: Request) -> dict[str, str]:
    """Every action's dependency: a session, the same origin and the session's CSRF token; the form."""
    check_same_origin(request)
    session = await viewer(request)
    form = await form_of(request)
    if getattr(request.state, "new_cookie", None) or not hmac.compare_digest(form.get("csrf", ""), session.csrf):
        log.warning("%s %s refused: missing or wrong CSRF token", request.method, request.url.path)
        raise Refused(status.HTTP_403_FORBIDDEN, "Refused: the form's CSRF token is missing or wrong; reload the "
                      "page and try again.")
    return form


def safe_next(path: str | None) -> str:
    """Where to go after the login: a path of this site only."""
    if not path or not path.startswith("/") or path.startswith("//") or "\\" in path:
        return "/"
    return path
