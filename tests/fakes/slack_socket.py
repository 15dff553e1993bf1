"""Slack's Socket Mode side, for the real slack-sdk and slack-bolt: `apps.connections.open` on the fake
Slack Web API (tests/fakes/slack_api.py), and the WebSocket server its URLs point at (aiohttp's).

As Slack does: each URL is good for one connection; a connection is greeted with `hello`; envelopes
(`events_api`, `interactive`, `slash_commands`) are sent one way and acknowledged with
`{"envelope_id": ...}` (and a `payload` where a response is accepted); a new connection is sent again,
with `retry_attempt` + 1, every envelope not acknowledged yet. Every acknowledgement is recorded.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

from tests.fakes.recording_server import Recorded
from tests.fakes.slack_api import FakeSlack

APP_TOKEN = "xapp-1-A0APP00001-1234567890-isolatortest"


@dataclass
class Ack:
    connection: int  # which connection it came on, counted from 1
    envelope_id: str
    payload: dict[str, Any] | None
    at: float  # time.monotonic()


@dataclass
class Connection:
    number: int
    socket: web.WebSocketResponse
    request: web.Request
    received: list[dict[str, Any]] = field(default_factory=list)  # everything the app sent on it

    @property
    def open(self) -> bool:
        return not self.socket.closed


class FakeSlackSocket:
    def __init__(self, slack: FakeSlack, app_token: str = APP_TOKEN) -> None:
        self.app_token = app_token
        self.connections: list[Connection] = []
        self.acks: list[Ack] = []
        self.envelopes: dict[str, dict[str, Any]] = {}  # every envelope sent, by id, as last sent
        self.sent_at: dict[str, float] = {}  # when each envelope was first sent (time.monotonic())
        self.url = ""
        self.urls_given = 0  # apps.connections.open answered with a URL
        self._tickets: set[str] = set()
        self._numbers = itertools.count(1)
        self._runner: web.AppRunner | None = None
        self._changed = asyncio.Condition()
        slack.server.route("POST", r"/api/apps\.connections\.open", self._open)

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get("/link/{ticket}", self._connect)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"ws://127.0.0.1:{port}"

    async def stop(self) -> None:
        for connection in self.connections:
            await connection.socket.close()
        if self._runner is not None:
            await self._runner.cleanup()

    # --- what a test does ----------------------------------------------------------------------------

    async def send(self, kind: str, payload: dict[str, Any], to: Connection | None = None) -> str:
        """Send a new envelope (to the newest open connection, or `to`); its envelope_id."""
        envelope_id = str(uuid.uuid4())
        envelope = {"envelope_id": envelope_id, "type": kind, "payload": payload,
                    "accepts_response_payload": kind != "events_api"}
        if kind == "events_api":
            envelope.update(retry_attempt=0, retry_reason="")
        self.envelopes[envelope_id] = envelope
        self.sent_at[envelope_id] = time.monotonic()
        await (to or await self.connection()).socket.send_json(envelope)
        return envelope_id

    async def resend(self, envelope_id: str, to: Connection) -> None:
        """Send an envelope again (as Slack does when its acknowledgement is late), to `to`."""
        envelope = self._retried(envelope_id)
        await to.socket.send_json(envelope)

    async def connection(self, number: int | None = None, timeout: float = 60) -> Connection:
        """The connection `number` (or the newest open one), once the app has opened it."""
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(lambda: self._find(number) is not None), timeout)
            found = self._find(number)
            assert found is not None
            return found

    async def drop(self, connection: Connection) -> None:
        """The connection goes away (a network cut, a Slack server gone), without Slack's `disconnect`."""
        if connection.request.transport is not None:
            connection.request.transport.abort()

    async def acked(self, envelope_id: str, timeout: float = 60) -> Ack:
        """The first acknowledgement of the envelope, once it has come."""
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(lambda: self.acks_of(envelope_id)), timeout)
        return self.acks_of(envelope_id)[0]

    def acks_of(self, envelope_id: str) -> list[Ack]:
        return [ack for ack in self.acks if ack.envelope_id == envelope_id]

    # --- Slack's side ----------------------------------------------------------------------------------

    def _open(self, request: Recorded) -> tuple[int, Any]:
        if request.headers.get("authorization") != f"Bearer {self.app_token}":
            return 200, {"ok": False, "error": "invalid_auth"}
        ticket = uuid.uuid4().hex
        self._tickets.add(ticket)
        self.urls_given += 1
        return 200, {"ok": True, "url": f"{self.url}/link/{ticket}"}

    async def _connect(self, request: web.Request) -> web.StreamResponse:
        ticket = request.match_info["ticket"]
        if ticket not in self._tickets:
            return web.Response(status=401, text="this URL was used or never given")
        self._tickets.discard(ticket)  # good for one connection
        socket = web.WebSocketResponse()  # answers pings itself
        await socket.prepare(request)
        connection = Connection(next(self._numbers), socket, request)
        await socket.send_json({"type": "hello", "num_connections": 1,
                                "connection_info": {"app_id": "A0APP00001"},
                                "debug_info": {"host": "fake-slack", "approximate_connection_time": 3600}})
        # What the connections before this one left unacknowledged comes again here.
        for envelope_id in [key for key in self.envelopes if not self.acks_of(key)]:
            await socket.send_json(self._retried(envelope_id))
        async with self._changed:
            self.connections.append(connection)
            self._changed.notify_all()
        async for message in socket:
            if message.type != WSMsgType.TEXT:
                continue
            data = json.loads(message.data)
            connection.received.append(data)
            if "envelope_id" in data:
                async with self._changed:
                    self.acks.append(Ack(connection.number, data["envelope_id"], data.get("payload"),
                                         time.monotonic()))
                    self._changed.notify_all()
        async with self._changed:
            self._changed.notify_all()
        return socket

    def _retried(self, envelope_id: str) -> dict[str, Any]:
        envelope = dict(self.envelopes[envelope_id])
        if envelope["type"] == "events_api":
            envelope.update(retry_attempt=envelope["retry_attempt"] + 1, retry_reason="timeout")
        self.envelopes[envelope_id] = envelope
        return envelope

    def _find(self, number: int | None) -> Connection | None:
        if number is not None:
            return next((item for item in self.connections if item.number == number), None)
        return next((item for item in reversed(self.connections) if item.open), None)
