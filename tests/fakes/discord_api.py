"""A fake Discord for the real discord.py: its REST API under `/api/v10`, and its Gateway, a websocket
at `/gateway`. Served by aiohttp, not RecordingServer: uvicorn here has no websocket library
(neither `websockets` nor `wsproto` is installed), and aiohttp comes with discord.py.

REST: `GET /users/@me` and `/oauth2/applications/@me` (both asked at login), `GET /gateway/bot` and
`/gateway`, `GET /channels/{id}`, messages posted and edited in channels and threads, threads started
from messages, the application's commands, and interaction follow-ups. Bot routes need
`Authorization: Bot <token>` (401 otherwise). Follow-ups need no authorization, only an interaction
token the test announced with `expect_interaction` (404 Unknown Webhook otherwise), as Discord
knows the tokens of the interactions it sent. Messages keep their `components` (buttons), recorded as
posted and as they are after an edit (an edit without `components` keeps them, `components: []` drops them). `fail` makes the next messages posted in channels
answer one of Discord's errors.

Gateway: HELLO, IDENTIFY answered with READY and the guild's GUILD_CREATE, heartbeats, RESUME
answered with the events after the client's sequence. Tests push events with `dispatch`, and
`replay_everything` makes the client reconnect and receive every event of its session again.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from aiohttp import WSMsgType, web

_DISCORD_EPOCH_MS = 1420070400000
# Snowflakes from now: tests share one Temporal server per session, and workflows are keyed by these ids.
_snowflakes = itertools.count((int(time.time() * 1000) - _DISCORD_EPOCH_MS) << 22)


def snowflake() -> str:
    return str(next(_snowflakes))


BOT_TOKEN = "MTEwMDAwMDAwMDAwMDAwMDAwMQ.fake.isolator-test-token"
APPLICATION_ID = "1100000000000000001"
BOT_USER = {"id": APPLICATION_ID, "username": "isolator", "discriminator": "0", "global_name": "isolator",
            "avatar": None, "bot": True}
PERSON = {"id": "1100000000000000100", "username": "ada", "discriminator": "0", "global_name": "Ada", "avatar": None}
OTHER_BOT = {"id": "1100000000000000200", "username": "otherbot", "discriminator": "0", "global_name": None,
             "avatar": None, "bot": True}
GUILD_ID = "1100000000000000300"
CHANNEL_ID = "1100000000000000400"
ROLE_ID = "1100000000000000500"  # the server's `developers` role
RATE_LIMIT_RETRY_AFTER = 0.05  # seconds a 429 from `fail` asks for: discord.py sleeps that long, then retries
# Gateway opcodes
DISPATCH, HEARTBEAT, IDENTIFY, RESUME, RECONNECT, INVALID_SESSION, HELLO, HEARTBEAT_ACK = 0, 1, 2, 6, 7, 9, 10, 11


@dataclass
class SentMessage:
    channel_id: str
    message_id: str
    content: str
    components: list[dict[str, Any]] = field(default_factory=list)  # action rows of buttons


@dataclass
class CreatedThread:
    parent_id: str
    message_id: str
    name: str


@dataclass
class FollowUp:
    application_id: str
    token: str
    message_id: str
    content: str
    components: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Session:
    """One Gateway session: its events, numbered, kept for resumes."""

    session_id: str
    events: list[dict[str, Any]] = field(default_factory=list)
    socket: web.WebSocketResponse | None = None
    replay_all: bool = False  # the next RESUME gets every event again, as after a lost acknowledgement


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> web.Response:
    # Exactly `application/json`, without a charset: discord.py reads anything else as text.
    return web.Response(body=json.dumps(data).encode(), status=status, content_type="application/json",
                        headers=headers)


def _refusal(status: int, code: int, message: str) -> web.Response:
    if status != 429:
        return _json({"message": message, "code": code}, status=status)
    # discord.py takes a 429 without `Via` for Cloudflare's ban and gives up; with it, it sleeps
    # `retry_after` from the body and retries. The headers round up, as Discord's do.
    reset_after = str(RATE_LIMIT_RETRY_AFTER)
    headers = {"Via": "1.1 google", "Retry-After": str(math.ceil(RATE_LIMIT_RETRY_AFTER)),
               "X-RateLimit-Limit": "5", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset-After": reset_after,
               "X-RateLimit-Reset": str(time.time() + RATE_LIMIT_RETRY_AFTER), "X-RateLimit-Bucket": "fake-bucket",
               "X-RateLimit-Scope": "user"}
    body = {"message": message, "code": code, "retry_after": RATE_LIMIT_RETRY_AFTER, "global": False}
    return _json(body, status=429, headers=headers)


class FakeDiscord:
    def __init__(self, token: str = BOT_TOKEN) -> None:
        self.token = token
        self.sent: list[SentMessage] = []  # messages posted in channels and threads, in order
        self.edits: list[SentMessage] = []  # their edits: the new content
        self.threads: list[CreatedThread] = []
        self.followups: list[FollowUp] = []
        self.followup_edits: list[FollowUp] = []
        self.commands: list[dict[str, Any]] = []  # the application commands last registered
        self.identifies: list[dict[str, Any]] = []
        self.resumes: list[dict[str, Any]] = []
        self.channels: dict[str, dict[str, Any]] = {CHANNEL_ID: self._text_channel()}
        self._messages: dict[str, dict[str, Any]] = {}
        self._nonces: dict[tuple[str, str], dict[str, Any]] = {}  # (channel, nonce) -> the message it made
        self._failures: list[tuple[int, int, str]] = []
        self._interaction_tokens: set[str] = set()
        self._original_responses: dict[str, str] = {}  # interaction token -> id of its `@original` message
        self._sessions: dict[str, Session] = {}
        self._ready = asyncio.Event()
        self._resumed = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self.url = ""

    # --- running -------------------------------------------------------------------------------

    async def start(self) -> str:
        """Start serving; returns the URL to use as DISCORD_API_URL."""
        app = web.Application()
        app.router.add_get("/gateway", self._gateway)
        app.router.add_route("*", "/api/v10/{path:.*}", self._rest)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.url = f"http://127.0.0.1:{port}"
        return self.api_url

    async def stop(self) -> None:
        for session in list(self._sessions.values()):  # a client may identify meanwhile
            if session.socket is not None and not session.socket.closed:
                await session.socket.close()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def api_url(self) -> str:
        return f"{self.url}/api/v10"

    @property
    def gateway_url(self) -> str:
        return self.url.replace("http://", "ws://") + "/gateway"

    async def wait_ready(self, timeout: float = 10) -> None:
        """Until a client has identified and been sent READY and its guild."""
        await asyncio.wait_for(self._ready.wait(), timeout)

    # --- what tests do -------------------------------------------------------------------------

    def expect_interaction(self, token: str) -> None:
        """Follow-ups with this interaction token are accepted (Discord knows the interactions it sent)."""
        self._interaction_tokens.add(token)

    def fail(self, status: int, code: int, message: str, times: int = 1) -> None:
        """The next `times` messages posted in channels get this error, as Discord words it, e.g.
        (403, 50001, "Missing Access"), or (429, 0, "You are being rate limited.") which discord.py
        retries after RATE_LIMIT_RETRY_AFTER."""
        self._failures += [(status, code, message)] * times

    def delete_message(self, message_id: str) -> None:
        """Someone deleted the message: editing it answers 404 Unknown Message."""
        self._messages.pop(message_id)

    def add_dm(self, channel_id: str, recipient: dict[str, Any] = PERSON) -> None:
        """A DM channel between the bot and `recipient`, which messages can be posted to."""
        self.channels[channel_id] = {"id": channel_id, "type": 1, "recipients": [recipient], "last_message_id": None}

    def add_thread(self, thread_id: str, parent_id: str = CHANNEL_ID, archived: bool = False) -> dict[str, Any]:
        """A thread Discord knows (and the next GUILD_CREATE lists); returns its channel object."""
        thread = self._thread(thread_id, parent_id, name=f"thread {thread_id}", archived=archived)
        self.channels[thread_id] = thread
        return thread

    async def dispatch(self, event: str, data: dict[str, Any]) -> None:
        """Send an event to every session, numbered in it; a disconnected one gets it when it resumes."""
        for session in list(self._sessions.values()):  # a client may identify meanwhile
            await self._send_event(session, event, data)

    async def replay_everything(self, timeout: float = 15) -> None:
        """A reconnect after which every event of the session arrives again; returns once resumed."""
        self._resumed.clear()
        for session in list(self._sessions.values()):  # a client may identify meanwhile
            if session.socket is not None and not session.socket.closed:
                session.replay_all = True
                await session.socket.send_str(json.dumps({"op": RECONNECT, "d": None}))
        await asyncio.wait_for(self._resumed.wait(), timeout)

    def message_create(self, content: str, *, channel_id: str = CHANNEL_ID, author: dict[str, Any] = PERSON,
                       mentions: tuple[dict[str, Any], ...] = (BOT_USER,), message_id: str | None = None,
                       referenced_message: dict[str, Any] | None = None, roles: tuple[str, ...] = ()) -> dict[str, Any]:
        """A MESSAGE_CREATE event's data: a message a person (or `author`) writes in a guild channel or
        thread, as a member with `roles`, or in a DM (a channel added with `add_dm`: no guild)."""
        message = self._message(message_id or snowflake(), channel_id, content, author, list(mentions))
        if self.channels.get(channel_id, {}).get("type") != 1:
            message["guild_id"] = GUILD_ID
            message["member"] = {"roles": list(roles), "joined_at": _now(), "deaf": False, "mute": False, "flags": 0}
        if referenced_message is not None:
            message["type"] = 19  # a reply
            message["message_reference"] = {"type": 0, "message_id": referenced_message["id"],
                                            "channel_id": referenced_message["channel_id"], "guild_id": GUILD_ID}
            message["referenced_message"] = referenced_message
        return message

    def message_of(self, sent: SentMessage) -> dict[str, Any]:
        """The message object of something the bot posted, as Discord would return it."""
        return self._messages[sent.message_id]

    def thread_update(self, thread_id: str, archived: bool = True) -> dict[str, Any]:
        """A THREAD_UPDATE event's data: the thread archived (or reopened) now."""
        thread = self.channels.get(thread_id) or self._thread(thread_id, CHANNEL_ID, f"thread {thread_id}", False)
        thread["thread_metadata"].update(archived=archived, archive_timestamp=_now())
        return {**thread, "guild_id": GUILD_ID}

    def thread_delete(self, thread_id: str) -> dict[str, Any]:
        """A THREAD_DELETE event's data; the fake forgets the thread."""
        thread = self.channels.pop(thread_id, None) or {"parent_id": CHANNEL_ID}
        return {"id": thread_id, "guild_id": GUILD_ID, "parent_id": thread["parent_id"], "type": 11}

    # --- the Gateway ---------------------------------------------------------------------------

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        # discord.py asks for `compress=zlib-stream`, but reads text frames as plain JSON: all are text.
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        await socket.send_str(json.dumps({"op": HELLO, "d": {"heartbeat_interval": 41250}}))
        async for frame in socket:
            if frame.type != WSMsgType.TEXT:
                continue
            payload = json.loads(frame.data)
            op, data = payload.get("op"), payload.get("d")
            if op == HEARTBEAT:
                await socket.send_str(json.dumps({"op": HEARTBEAT_ACK, "d": None}))
            elif op == IDENTIFY:
                await self._identify(socket, data)
            elif op == RESUME:
                await self._resume(socket, data)
        return socket

    async def _identify(self, socket: web.WebSocketResponse, data: dict[str, Any]) -> None:
        self.identifies.append(data)
        if data.get("token") != self.token:
            await socket.close(code=4004, message=b"Authentication failed.")
            return
        session = Session(uuid.uuid4().hex, socket=socket)
        self._sessions[session.session_id] = session
        # The guild is unavailable in READY; discord.py waits for its GUILD_CREATE before `on_ready`.
        ready = {"v": 10, "user": BOT_USER, "guilds": [{"id": GUILD_ID, "unavailable": True}],
                 "session_id": session.session_id, "resume_gateway_url": self.gateway_url,
                 "application": {"id": APPLICATION_ID, "flags": 0}, "private_channels": [], "relationships": []}
        await self._send_event(session, "READY", ready)
        await self._send_event(session, "GUILD_CREATE", self._guild())
        self._ready.set()

    async def _resume(self, socket: web.WebSocketResponse, data: dict[str, Any]) -> None:
        self.resumes.append(data)
        session = self._sessions.get(data.get("session_id", ""))
        if session is None or data.get("token") != self.token:
            await socket.send_str(json.dumps({"op": INVALID_SESSION, "d": False}))
            return
        session.socket = socket
        # Events are numbered from 1, so events[n:] are those after sequence n. Even replaying
        # everything, READY (always first) stays out: Discord sends it for IDENTIFY only.
        after = 1 if session.replay_all else (data.get("seq") or 0)
        session.replay_all = False
        for payload in session.events[after:]:
            await socket.send_str(json.dumps(payload))
        await self._send_event(session, "RESUMED", {})
        self._resumed.set()

    async def _send_event(self, session: Session, event: str, data: dict[str, Any]) -> None:
        payload = {"op": DISPATCH, "t": event, "s": len(session.events) + 1, "d": data}
        session.events.append(payload)
        if session.socket is not None and not session.socket.closed:
            await session.socket.send_str(json.dumps(payload))

    def _guild(self) -> dict[str, Any]:
        channels = [channel for channel in self.channels.values() if channel["type"] == 0]
        threads = [channel for channel in self.channels.values() if channel["type"] == 11]
        return {
            "id": GUILD_ID, "name": "Team", "owner_id": PERSON["id"], "member_count": 2, "large": False,
            "unavailable": False, "roles": [
                {"id": GUILD_ID, "name": "@everyone", "permissions": "1099511627775", "position": 0, "color": 0,
                 "hoist": False, "managed": False, "mentionable": False, "flags": 0},
                {"id": ROLE_ID, "name": "developers", "permissions": "0", "position": 1, "color": 0,
                 "hoist": False, "managed": False, "mentionable": False, "flags": 0}],
            # GUILD_CREATE leaves `guild_id` out of its channels.
            "channels": [{key: value for key, value in channel.items() if key != "guild_id"} for channel in channels],
            "threads": threads,
            "members": [{"user": BOT_USER, "roles": [], "joined_at": _now(), "deaf": False, "mute": False, "flags": 0}],
            "emojis": [], "stickers": [], "features": [], "voice_states": [], "presences": [],
            "stage_instances": [], "guild_scheduled_events": [], "soundboard_sounds": [],
        }

    # --- REST ----------------------------------------------------------------------------------

    async def _rest(self, request: web.Request) -> web.Response:
        path, method = "/" + request.match_info["path"], request.method
        body = await request.json() if request.can_read_body else {}
        parts = path.strip("/").split("/")
        if parts[0] == "webhooks":
            return self._webhook(method, parts, body)
        if (method, path) == ("GET", "/gateway"):  # the one route Discord answers without a token
            return _json({"url": self.gateway_url})
        if request.headers.get("Authorization") != f"Bot {self.token}":
            return _refusal(401, 0, "401: Unauthorized")
        if (method, path) == ("GET", "/users/@me"):
            return _json(BOT_USER)
        if (method, path) == ("GET", "/oauth2/applications/@me"):
            return _json({"id": APPLICATION_ID, "name": "isolator", "description": "", "icon": None,
                          "bot_public": False, "bot_require_code_grant": False, "owner": PERSON,
                          "verify_key": "0" * 64, "flags": 0})
        if (method, path) == ("GET", "/gateway/bot"):
            return _json({"url": self.gateway_url, "shards": 1, "session_start_limit": {
                "total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1}})
        if method == "PUT" and parts[0] == "applications" and parts[2:] == ["commands"]:
            self.commands = body
            return _json([{**command, "id": snowflake(), "application_id": parts[1], "version": "1"}
                          for command in body])
        if parts[0] == "channels":
            return await self._channel_route(method, parts[1:], body)
        return _refusal(404, 0, f"no fake route for {method} {path}")

    async def _channel_route(self, method: str, parts: list[str], body: dict[str, Any]) -> web.Response:
        channel = self.channels.get(parts[0])
        if channel is None:
            return _refusal(404, 10003, "Unknown Channel")
        channel_id = parts[0]
        if method == "GET" and len(parts) == 1:
            return _json(channel)
        if method == "POST" and parts[1:] == ["messages"]:
            return self._post_message(channel, body)
        if method == "PATCH" and len(parts) == 3 and parts[1] == "messages":
            message = self._messages.get(parts[2])
            if message is None or message["channel_id"] != channel_id:
                return _refusal(404, 10008, "Unknown Message")
            message.update(content=body.get("content", message["content"]),
                           components=body.get("components", message["components"]), edited_timestamp=_now())
            self.edits.append(SentMessage(channel_id, parts[2], message["content"], message["components"]))
            return _json(message)
        if method == "POST" and len(parts) == 4 and parts[1] == "messages" and parts[3] == "threads":
            return await self._start_thread(channel_id, parts[2], body)
        return _refusal(404, 0, f"no fake route for {method} /channels/{'/'.join(parts)}")

    def _post_message(self, channel: dict[str, Any], body: dict[str, Any]) -> web.Response:
        if self._failures:
            return _refusal(*self._failures.pop(0))
        # With `enforce_nonce`, a nonce seen lately in the channel gets its message back, not a new one.
        nonce_key = (channel["id"], str(body.get("nonce")))
        if body.get("enforce_nonce") and nonce_key in self._nonces:
            return _json(self._nonces[nonce_key])
        content = body.get("content") or ""
        if len(content) > 2000:
            return _json({"code": 50035, "message": "Invalid Form Body", "errors": {"content": {
                "_errors": [{"code": "BASE_TYPE_MAX_LENGTH", "message": "Must be 2000 or fewer in length."}]}}},
                status=400)
        if channel["type"] == 11:
            channel["thread_metadata"]["archived"] = False  # posting in an archived thread reopens it
        message = self._message(snowflake(), channel["id"], content, BOT_USER, [], body.get("components", []))
        self._messages[message["id"]] = message
        if body.get("enforce_nonce"):
            self._nonces[nonce_key] = message
        self.sent.append(SentMessage(channel["id"], message["id"], content, message["components"]))
        return _json(message)

    async def _start_thread(self, parent_id: str, message_id: str, body: dict[str, Any]) -> web.Response:
        if message_id in self.channels:
            return _refusal(400, 160004, "A thread has already been created for this message")
        thread = self._thread(message_id, parent_id, body.get("name", ""), archived=False)
        self.channels[message_id] = thread
        self.threads.append(CreatedThread(parent_id, message_id, thread["name"]))
        # Discord tells the Gateway about the new thread too; the client then has it in its cache.
        await self.dispatch("THREAD_CREATE", {**thread, "newly_created": True})
        return _json(thread, status=201)

    def _webhook(self, method: str, parts: list[str], body: dict[str, Any]) -> web.Response:
        # /webhooks/{application}/{token}[/messages/{id or @original}]
        application_id, token = (parts[1:3] + ["", ""])[:2]
        if application_id != APPLICATION_ID or token not in self._interaction_tokens:
            return _refusal(404, 10015, "Unknown Webhook")
        content = body.get("content") or ""
        if method == "POST" and len(parts) == 3:
            message_id = snowflake()
            components = body.get("components", [])
            self.followups.append(FollowUp(application_id, token, message_id, content, components))
        elif method == "PATCH" and len(parts) == 5 and parts[3] == "messages":
            message_id = parts[4]
            if message_id == "@original":  # the interaction's first response; discord.py wants a real id back
                message_id = self._original_responses.setdefault(token, snowflake())
            components = body.get("components", self._followup_components(message_id))
            self.followup_edits.append(FollowUp(application_id, token, message_id, content, components))
        else:
            return _refusal(404, 0, f"no fake route for {method} /webhooks/{application_id}/…")
        message = self._message(message_id, CHANNEL_ID, content, BOT_USER, [], components)
        return _json({**message, "webhook_id": application_id})

    def _followup_components(self, message_id: str) -> list[dict[str, Any]]:
        """A follow-up's buttons as last sent: an edit without `components` keeps them."""
        versions = [f for f in self.followups + self.followup_edits if f.message_id == message_id]
        return versions[-1].components if versions else []

    # --- Discord's objects ---------------------------------------------------------------------

    @staticmethod
    def _text_channel() -> dict[str, Any]:
        return {"id": CHANNEL_ID, "type": 0, "guild_id": GUILD_ID, "name": "general", "position": 0,
                "permission_overwrites": [], "nsfw": False, "parent_id": None, "topic": None,
                "last_message_id": None, "rate_limit_per_user": 0}

    @staticmethod
    def _thread(thread_id: str, parent_id: str, name: str, archived: bool) -> dict[str, Any]:
        return {"id": thread_id, "type": 11, "guild_id": GUILD_ID, "parent_id": parent_id, "owner_id": BOT_USER["id"],
                "name": name, "last_message_id": None, "rate_limit_per_user": 0, "message_count": 0,
                "member_count": 1, "flags": 0,
                "thread_metadata": {"archived": archived, "auto_archive_duration": 1440, "archive_timestamp": _now(),
                                    "locked": False}}

    @staticmethod
    def _message(message_id: str, channel_id: str, content: str, author: dict[str, Any],
                 mentions: list[dict[str, Any]], components: list[dict[str, Any]] | None = None) -> dict[str, Any]:
        return {"id": message_id, "channel_id": channel_id, "type": 0, "content": content, "author": author,
                "timestamp": _now(), "edited_timestamp": None, "tts": False, "mention_everyone": False,
                "mentions": mentions, "mention_roles": [], "attachments": [], "embeds": [], "pinned": False,
                "flags": 0, "components": components or []}
