"""A fake Slack Web API (`auth.test`, `chat.postMessage`, `chat.update`, `chat.postEphemeral`) on
RecordingServer, for the real slack-sdk. Block Kit blocks are recorded as sent.

Slack answers HTTP 200 with `{"ok": false, "error": ...}` for most errors; `fail` reproduces that
(or another status, e.g. 429 for rate limits) for the next calls of one method.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from typing import Any

from tests.fakes.recording_server import Recorded, RecordingServer

TEAM_ID = "T0TEAM0001"
BOT_USER_ID = "U0BOT00001"
BOT_ID = "B0BOT00001"
BOT_TOKEN = "xoxb-isolator-test-token"  # bolt only treats `xoxb-` tokens as bot tokens


@dataclass
class Post:
    channel: str
    thread_ts: str | None
    text: str
    ts: str = ""
    blocks: list[dict] | None = None  # None: sent as plain text


@dataclass
class Edit:
    """A chat.update: `blocks` None keeps the message's blocks (as Slack does), `[]` removes them."""

    channel: str
    ts: str
    text: str
    blocks: list[dict] | None


@dataclass
class Ephemeral:
    """A chat.postEphemeral: seen by `user` alone."""

    channel: str
    user: str
    thread_ts: str | None
    text: str


class FakeSlack:
    def __init__(self, token: str = BOT_TOKEN) -> None:
        self.token = token
        self.server = RecordingServer()
        self._failures: dict[str, list[tuple[int, str]]] = {}
        self.posts: list[Post] = []  # the messages posted successfully, in order
        self.updates: list[tuple[str, str, str]] = []  # chat.update calls: (channel, ts, text), in order
        self.edits: list[Edit] = []  # the same calls with their blocks
        self.ephemerals: list[Ephemeral] = []
        self.arrivals: list[tuple[float, str]] = []  # every text posted or updated, with when it arrived
        self._ts = itertools.count(1)
        self.deleted: set[str] = set()  # ts of messages deleted: chat.update answers `message_not_found`
        self.channels: dict[str, str] = {}  # channel id -> name, for conversations.info (others: channel_not_found)
        self.server.route("POST", r"/api/auth\.test", self._auth_test)
        self.server.route("POST", r"/api/chat\.postMessage", self._post_message)
        self.server.route("POST", r"/api/chat\.update", self._update_message)
        self.server.route("POST", r"/api/chat\.postEphemeral", self._post_ephemeral)
        self.server.route("GET", r"/api/conversations\.info", self._conversation_info)

    async def start(self) -> str:
        """Start serving; returns the base URL to use as SLACK_API_URL."""
        await self.server.start()
        return self.api_url

    async def stop(self) -> None:
        await self.server.stop()

    @property
    def api_url(self) -> str:
        return f"{self.server.url}/api/"

    def fail(self, method: str, error: str, status: int = 200, times: int = 1) -> None:
        """Answer the next `times` calls of `method` (e.g. "chat.postMessage") with this error."""
        self._failures.setdefault(method, []).extend([(status, error)] * times)

    def delete(self, ts: str) -> None:
        """Someone deleted the message: `chat.update` answers as Slack does for it."""
        self.deleted.add(ts)

    def blocks(self, ts: str) -> list[dict]:
        """The blocks message `ts` shows now: as posted, then as its edits left them."""
        shown = next((post.blocks for post in self.posts if post.ts == ts), None)
        for edit in self.edits:
            if edit.ts == ts and edit.blocks is not None:
                shown = edit.blocks
        return shown or []

    def calls(self, method: str) -> int:
        """How many requests `method` (e.g. "auth.test") received, failed ones included."""
        return len(self.server.received("POST", "/api/" + method.replace(".", r"\.")))

    def _refusal(self, method: str, request: Recorded) -> tuple[int, Any] | None:
        if request.headers.get("authorization") != f"Bearer {self.token}":
            return 200, {"ok": False, "error": "invalid_auth"}
        failures = self._failures.get(method)
        if failures:
            status, error = failures.pop(0)
            return status, {"ok": False, "error": error}
        return None

    def _auth_test(self, request: Recorded) -> tuple[int, Any]:
        refusal = self._refusal("auth.test", request)
        if refusal is not None:
            return refusal
        return 200, {
            "ok": True,
            "url": "https://isolator-test.slack.com/",
            "team": "Isolator Test",
            "user": "isolator",
            "team_id": TEAM_ID,
            "user_id": BOT_USER_ID,
            "bot_id": BOT_ID,
            "is_enterprise_install": False,
        }

    def _update_message(self, request: Recorded) -> tuple[int, Any]:
        refusal = self._refusal("chat.update", request)
        if refusal is not None:
            return refusal
        payload = request.payload()
        if payload["ts"] in self.deleted:
            return 200, {"ok": False, "error": "message_not_found"}
        self.updates.append((payload["channel"], payload["ts"], payload["text"]))
        self.edits.append(Edit(payload["channel"], payload["ts"], payload["text"], payload.get("blocks")))
        self.arrivals.append((time.time(), payload["text"]))
        return 200, {"ok": True, "channel": payload["channel"], "ts": payload["ts"], "text": payload["text"]}

    def _post_message(self, request: Recorded) -> tuple[int, Any]:
        refusal = self._refusal("chat.postMessage", request)
        if refusal is not None:
            return refusal
        payload = request.payload()
        if not payload.get("channel") or not payload.get("text"):
            return 200, {"ok": False, "error": "no_text" if payload.get("channel") else "channel_not_found"}
        ts = f"1700000000.{next(self._ts):06d}"
        self.posts.append(Post(channel=payload["channel"], thread_ts=payload.get("thread_ts"), text=payload["text"],
                               ts=ts, blocks=payload.get("blocks")))
        self.arrivals.append((time.time(), payload["text"]))
        return 200, {
            "ok": True,
            "channel": payload["channel"],
            "ts": ts,
            "message": {"type": "message", "text": payload["text"], "user": BOT_USER_ID, "bot_id": BOT_ID, "ts": ts},
        }

    def _post_ephemeral(self, request: Recorded) -> tuple[int, Any]:
        refusal = self._refusal("chat.postEphemeral", request)
        if refusal is not None:
            return refusal
        payload = request.payload()
        if not payload.get("channel") or not payload.get("user") or not payload.get("text"):
            return 200, {"ok": False, "error": "invalid_arguments"}
        self.ephemerals.append(Ephemeral(payload["channel"], payload["user"], payload.get("thread_ts"),
                                         payload["text"]))
        return 200, {"ok": True, "message_ts": f"1700000000.{next(self._ts):06d}"}

    def _conversation_info(self, request: Recorded) -> tuple[int, Any]:
        refusal = self._refusal("conversations.info", request)
        if refusal is not None:
            return refusal
        channel = (request.query.get("channel") or [""])[0]
        if channel not in self.channels:
            return 200, {"ok": False, "error": "channel_not_found"}
        return 200, {"ok": True, "channel": {"id": channel, "name": self.channels[channel], "is_channel": True,
                                             "is_member": True, "is_private": False}}
