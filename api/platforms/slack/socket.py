"""Slack over Socket Mode (SLACK_APP_TOKEN): the API process opens a WebSocket to Slack and is sent
its events, slash commands and button presses there, so nothing has to reach this machine
(docs/platforms.md#connect-slack).

It runs in the API process, as Telegram's poller does: there it shares the Temporal client whose
worker starts message workflows eagerly, so an envelope starts its work as fast as a webhook would.

Each envelope goes to the webhook's own listeners (api/platforms/slack/listeners.py) through bolt's
Socket Mode handler, and is acknowledged only once they return: its workflow started, its press
recorded, or a reason it is never to be taken (an event it ignores, a payload it cannot read). One it
could not take now (Temporal out of reach) is left unacknowledged, and Slack sends it again. Slack also
sends again an envelope whose acknowledgement was lost with its connection; and with two processes
holding the token, Slack may send the second try to the other one. Either way the work is keyed by the
message (its workflow id) or the press (seen_presses), so it starts once.

The connection is slack-sdk's aiohttp client, which pings, notices a dead or closed connection and
follows Slack's `disconnect` requests. Here each connection asks `apps.connections.open` for a URL of
its own (Slack's URLs are good for one connection), and reconnections that keep failing wait 1, 2,
4, ... up to 60 seconds between tries, from the first `hello` of a connection on again from nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from typing import Any, AsyncIterator

import aiohttp
import asyncpg
from slack_bolt.adapter.socket_mode.async_base_handler import AsyncBaseSocketModeHandler
from slack_bolt.adapter.socket_mode.internals import build_headers
from slack_bolt.async_app import AsyncApp, AsyncBoltRequest
from slack_sdk.errors import SlackApiError
from slack_sdk.socket_mode.aiohttp import SocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse
from slack_sdk.web.async_client import AsyncWebClient
from temporalio.client import Client

from api.platforms.slack.listeners import build_bolt_app
from isolator.settings import Settings

log = logging.getLogger(__name__)

PING_SECONDS = 10.0  # how often the connection is checked; bolt's own default
BACKOFF_SECONDS = (1.0, 60.0)  # the first and the longest wait between failed connections


class ReconnectingClient(SocketModeClient):
    """slack-sdk's client, with a new URL for every connection and a growing wait between failed ones."""

    def __init__(self, app_token: str, web_client: AsyncWebClient, ping_interval: float) -> None:
        super().__init__(app_token=app_token, web_client=web_client, ping_interval=ping_interval, logger=log)
        self.failed_attempts = 0  # connections tried since the last one Slack greeted
        self.message_listeners.append(_greeted)

    async def issue_new_wss_url(self) -> str:
        if self.failed_attempts:
            wait = min(BACKOFF_SECONDS[0] * 2 ** (self.failed_attempts - 1), BACKOFF_SECONDS[1])
            log.warning("slack socket: connecting again in %.0f s (try %d)", wait, self.failed_attempts + 1)
            await asyncio.sleep(wait)
        self.failed_attempts += 1
        return await super().issue_new_wss_url()

    async def connect(self) -> None:
        """One try: a new URL, the connection, then its reader and its monitor; a failure is raised to the
        caller (the monitor of the connection before, or SlackSocket.run), which tries again."""
        self.auto_reconnect_enabled = False  # the old connection's close must not start another try
        try:
            old = self.current_session
            if old is not None:
                with contextlib.suppress(Exception):
                    await old.close()
            if self.wss_uri is None:
                self.wss_uri = await self.issue_new_wss_url()
            uri, self.wss_uri = self.wss_uri, None  # good for this connection only
            if self.aiohttp_client_session.closed:
                self.aiohttp_client_session = aiohttp.ClientSession()
            self.current_session = await self.aiohttp_client_session.ws_connect(
                uri, autoping=False, heartbeat=self.ping_interval, proxy=self.proxy,
                ssl=self.web_client.ssl if self.web_client.ssl is not None else True)
        finally:
            self.auto_reconnect_enabled = self.default_auto_reconnect_enabled
        self.stale, self.last_ping_pong_time = False, None
        for task in (self.current_session_monitor, self.message_receiver):
            if task is not None:
                task.cancel()
        self.current_session_monitor = asyncio.ensure_future(self.monitor_current_session())
        self.message_receiver = asyncio.ensure_future(self.receive_messages())


async def _greeted(client: ReconnectingClient, message: dict, raw: str | None) -> None:
    if message.get("type") == "hello":
        client.failed_attempts = 0
        log.info("slack socket: connected")


class EnvelopeHandler(AsyncBaseSocketModeHandler):
    """bolt's Socket Mode handler, acknowledging an envelope only once its work is recorded."""

    def __init__(self, app: AsyncApp, client: ReconnectingClient, context: dict[str, Any]) -> None:
        self.app, self.client, self.context = app, client, context
        client.socket_mode_request_listeners.append(self.handle)  # type: ignore[arg-type]

    async def handle(self, client: SocketModeClient, req: SocketModeRequest) -> None:  # type: ignore[override]
        request = AsyncBoltRequest(mode="socket_mode", body=req.payload, headers=build_headers(req),
                                   context=dict(self.context))
        response = await self.app.async_dispatch(request)
        if response.status >= 500:
            log.warning("slack %s envelope %s not acknowledged, so Slack sends it again: %s",
                        req.type, req.envelope_id, response.body)
            return
        if response.status != 200:  # refused or ignored for good: said here, and acknowledged
            log.info("slack %s envelope %s not taken (%d): %s", req.type, req.envelope_id, response.status,
                     response.body)
        payload = _json(response.body) if response.status == 200 else None
        try:
            await client.send_socket_mode_response(SocketModeResponse(envelope_id=req.envelope_id, payload=payload))
        except (ConnectionError, aiohttp.ClientError) as error:
            log.warning("slack envelope %s: its acknowledgement was lost with its connection (%s); Slack sends it "
                        "again and it is taken once", req.envelope_id, type(error).__name__)


def _json(body: str) -> dict[str, Any] | None:
    """The listener's answer to show (a slash command's private reply), when it gave one."""
    if not body:
        return None
    try:
        parsed = json.loads(body)
    except ValueError:
        return {"text": body}
    return parsed if isinstance(parsed, dict) else None


class SlackSocket:
    """This process's Socket Mode connection to Slack."""

    def __init__(self, settings: Settings, temporal: Client, pool: asyncpg.Pool,
                 ping_interval: float = PING_SECONDS) -> None:
        assert settings.slack_app_token is not None, "Socket Mode only with SLACK_APP_TOKEN"
        self._token = settings.slack_app_token.get_secret_value()
        self.app = build_bolt_app(settings, None)
        self.ping_interval = ping_interval
        self.context = {"temporal": temporal, "pool": pool}

    async def run(self) -> None:
        """Connect (trying again as long as it takes), then let the client hold the connection until cancelled."""
        client = ReconnectingClient(self._token, self.app.client, self.ping_interval)
        EnvelopeHandler(self.app, client, self.context)
        try:
            while True:
                try:
                    await client.connect()
                    break
                except (SlackApiError, aiohttp.ClientError, OSError, asyncio.TimeoutError) as error:
                    log.warning("slack socket: cannot connect: %s", _said(error))
            await asyncio.Event().wait()
        finally:
            await client.close()


def _said(error: Exception) -> str:
    if isinstance(error, SlackApiError):
        reason = error.response.get("error")
        if reason in ("invalid_auth", "not_authed", "not_allowed_token_type"):
            return (f"Slack refuses SLACK_APP_TOKEN ({reason}): give an app-level token (xapp-...) with the "
                    "connections:write scope (`isolator doctor` checks it)")
        return f"apps.connections.open answered {reason}"
    return f"{type(error).__name__}: {error}"


@contextlib.asynccontextmanager
async def slack_socket(settings: Settings, temporal: Client, pool: asyncpg.Pool) -> AsyncIterator[None]:
    """Slack's Socket Mode for the duration of the block, with SLACK_APP_TOKEN; nothing otherwise."""
    if settings.slack_app_token is None:
        yield
        return
    running = asyncio.create_task(SlackSocket(settings, temporal, pool).run())
    running.add_done_callback(_report_end)
    try:
        yield
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)


def _report_end(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and (error := task.exception()) is not None:
        log.error("Slack's Socket Mode stopped: %s: %s", type(error).__name__, error)
