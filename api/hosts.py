"""The `Host` names the server answers to; any other request gets 400 before it reaches a route.

A page on another site can make a browser send requests to this server under the other site's name (DNS
rebinding: the name resolves to this machine's address once the page is loaded). The browser then
treats this server as that site: it reads the answers, and the dashboard's same-origin check passes. Only
the name in `Host` gives it away, so every request (API, dashboard, webhooks, health) must name this
server: a loopback name, PUBLIC_URL's host, or one of ALLOWED_HOSTS. A name listed without a port is
answered on any port; one listed with a port (`isolator.example.org:8443`) only with that port.
"""

from __future__ import annotations

import json
import logging
from functools import lru_cache
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Receive, Scope, Send

from isolator.settings import Settings

log = logging.getLogger(__name__)

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")

HostName = tuple[str, str | None]  # (name, port or None for any port)


def split_host(value: str) -> HostName:
    """`Name:port` as (name, port): lower-case, without a trailing dot; an IPv6 address keeps its brackets."""
    value = value.strip().lower()
    if value.startswith("["):
        name, _, port = value.partition("]")
        name, port = name + "]", port.removeprefix(":")
    else:
        name, _, port = value.partition(":")
    return name.rstrip("."), port or None


@lru_cache(maxsize=16)
def allowed_names(public_url: str | None, allowed_hosts: tuple[str, ...]) -> frozenset[HostName]:
    names = {(name, None) for name in LOOPBACK_NAMES}
    if public_url:
        names.add((split_host(urlsplit(public_url).netloc.rpartition("@")[2])[0], None))
    names.update(split_host(entry) for entry in allowed_hosts)
    return frozenset(names)


def is_allowed(host: str, settings: Settings) -> bool:
    name, port = split_host(host)
    allowed = allowed_names(settings.public_url, tuple(settings.extra_allowed_hosts))
    if not name or not (port is None or port.isdigit()):
        return False
    return (name, None) in allowed or (name, port) in allowed


class HostCheck:
    """Pure ASGI middleware: refuses a request whose `Host` is missing or not one of this server's names.
    The settings are read at every request (tests change PUBLIC_URL on a running app)."""

    def __init__(self, app: ASGIApp, settings: Settings) -> None:
        self.app, self.settings = app, settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        host = dict(scope["headers"]).get(b"host", b"").decode("latin-1")
        if is_allowed(host, self.settings):
            await self.app(scope, receive, send)
            return
        log.warning("%s refused: Host %r is not one this server answers to", scope["path"], host[:100])
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        await _refuse(send)


async def _refuse(send: Send) -> None:
    detail = ("the Host header names another server: this one answers to loopback names, PUBLIC_URL's host "
              "and ALLOWED_HOSTS")
    body = json.dumps({"detail": detail}).encode()
    await send({"type": "http.response.start", "status": 400,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
