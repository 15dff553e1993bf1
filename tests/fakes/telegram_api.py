"""A fake Telegram Bot API (`getMe`, `sendMessage`, `editMessageText`, `answerCallbackQuery`, and for
polling `getUpdates` and `deleteWebhook`) on RecordingServer, for the real python-telegram-bot.

The Bot API lives under `/bot<token>/<method>`; an unknown token gets 401 "Unauthorized" as from
Telegram. `fail` makes the next `sendMessage` calls answer like Telegram's errors
(`{"ok": false, "error_code": ..., "description": ...}`), e.g. 400 "Bad Request: chat not found",
403 "Forbidden: bot was blocked by the user", or 429 with `retry_after`; `delete` makes a message's
edits answer 400 "message to edit not found". `messages` keeps each message as it reads now, inline
keyboard included: an edit without `reply_markup` drops the keyboard, as Telegram does.

Polling as Telegram serves it: `push` queues an update; `getUpdates` drops those below its `offset` (the
offset confirms them), answers at once with what is left, or waits up to its `timeout` for one. While
`webhook_url` is set it answers 409, as it does while a webhook is set; a newer `getUpdates` ends one
still waiting with 409 ("terminated by other getUpdates request"), and `conflict` makes every one answer so.

`setWebhook` sets what `getWebhookInfo` answers (its URL and allowed_updates) and keeps the secret_token
in `webhook_secret`; as Telegram, it refuses a URL that is not HTTPS and a secret_token with other
characters than letters, digits, `_` and `-`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import re
import time
from dataclasses import dataclass, field, replace
from typing import Any

from tests.fakes.recording_server import Recorded, RecordingServer

BOT_TOKEN = "7000001:AAisolator-test-token"
BOT_USER = {
    "id": 7000001,
    "is_bot": True,
    "first_name": "Isolator",
    "username": "isolator",
    "can_join_groups": True,
    "can_read_all_group_messages": False,
    "supports_inline_queries": False,
}


@dataclass
class Sent:
    chat_id: int
    message_thread_id: int | None
    text: str
    reply_markup: dict[str, Any] | None = None  # as sent: {"inline_keyboard": [[{"text", "callback_data"}, ...]]}
    message_id: int = field(default=0, compare=False)

    @property
    def buttons(self) -> list[dict[str, Any]]:
        """The inline keyboard's buttons, row by row."""
        return [button for row in (self.reply_markup or {}).get("inline_keyboard", []) for button in row]


@dataclass
class CallbackAnswer:
    """An answerCallbackQuery: the toast (or, with show_alert, the alert) only the presser sees."""

    callback_query_id: str
    text: str | None
    show_alert: bool


class FakeTelegram:
    def __init__(self, token: str = BOT_TOKEN) -> None:
        self.token = token
        self.server = RecordingServer()
        self.sent: list[Sent] = []  # the messages sent successfully, in order
        self.edits: list[tuple[int, int, str]] = []  # editMessageText calls: (chat_id, message_id, text)
        self.messages: dict[int, Sent] = {}  # message id -> the message as it reads now (edits applied)
        self.callback_answers: list[CallbackAnswer] = []
        self._failures: list[tuple[int, str, int | None]] = []
        self.deleted: set[int] = set()  # message ids deleted in the chat: editing them answers 400
        self._message_ids = itertools.count(1)
        # What getWebhookInfo answers: a test sets `last_error_message` and `pending_update_count` as Telegram would.
        self.webhook: dict[str, Any] = {"url": "", "has_custom_certificate": False, "pending_update_count": 0}
        self.pending: list[dict[str, Any]] = []  # updates not yet confirmed by a getUpdates offset
        self.webhook_secret: str | None = None  # the secret_token of the last setWebhook
        self.outage = 0  # the next this many requests answer 502 Bad Gateway, as Telegram's front does when down
        self.conflict = False
        self.allowed_updates: list[str] | None = None  # as the last getUpdates asked
        self._stopping = False
        self.polls_waiting = 0  # getUpdates requests holding on for an update now (long polling)
        self._arrived = asyncio.Event()
        self._polls = itertools.count(1)
        self._newest_poll = 0
        self.server.route("POST", r"/bot(?P<token>[^/]+)/getMe", self._get_me)
        self.server.route("POST", r"/bot(?P<token>[^/]+)/getWebhookInfo", self._get_webhook_info)
        self.server.route("POST", r"/bot(?P<token>[^/]+)/sendMessage", self._send_message)
        self.server.route("POST", r"/bot(?P<token>[^/]+)/editMessageText", self._edit_message)
        self.server.route("POST", r"/bot(?P<token>[^/]+)/answerCallbackQuery", self._answer_callback_query)
        self.server.route("POST", r"/bot(?P<token>[^/]+)/getUpdates", self._get_updates)
        self.server.route("POST", r"/bot(?P<token>[^/]+)/deleteWebhook", self._delete_webhook)
        self.server.route("POST", r"/bot(?P<token>[^/]+)/setWebhook", self._set_webhook)

    @property
    def webhook_url(self) -> str | None:
        """The webhook set (getWebhookInfo's `url`); None when there is none."""
        return self.webhook["url"] or None

    @webhook_url.setter
    def webhook_url(self, url: str | None) -> None:
        self.webhook["url"] = url or ""

    async def start(self) -> str:
        """Start serving; returns the URL to use as TELEGRAM_API_URL (the token is appended to it)."""
        await self.server.start()
        return self.api_url

    async def stop(self) -> None:
        # A long poll still held ends now, as the real server's connections end with it: the
        # server's graceful stop would otherwise wait out its `timeout` (30 s).
        self._stopping = True
        self._arrived.set()
        await self.server.stop()

    @property
    def api_url(self) -> str:
        return f"{self.server.url}/bot"

    def fail(self, status: int, description: str, times: int = 1, retry_after: int | None = None) -> None:
        """Answer the next `times` sendMessage calls with this error."""
        self._failures.extend([(status, description, retry_after)] * times)

    def delete(self, message_id: int) -> None:
        """Someone deleted the message: `editMessageText` answers as Telegram does for it."""
        self.deleted.add(message_id)

    def push(self, update: dict[str, Any]) -> None:
        """Telegram receives an update for the bot: the next getUpdates gets it."""
        self.pending.append(update)
        self._arrived.set()

    def calls(self, method: str) -> int:
        """How many requests `method` (e.g. "sendMessage") received, failed ones included."""
        return len(self.server.received("POST", rf"/bot[^/]+/{method}"))

    def _unauthorized(self, request: Recorded) -> tuple[int, Any] | None:
        if self.outage > 0:
            self.outage -= 1
            return 502, {"ok": False, "error_code": 502, "description": "Bad Gateway"}
        if request.params["token"] != self.token:
            return 401, {"ok": False, "error_code": 401, "description": "Unauthorized"}
        return None

    def _get_me(self, request: Recorded) -> tuple[int, Any]:
        return self._unauthorized(request) or (200, {"ok": True, "result": BOT_USER})

    def _get_webhook_info(self, request: Recorded) -> tuple[int, Any]:
        return self._unauthorized(request) or (200, {"ok": True, "result": self.webhook})

    def _edit_message(self, request: Recorded) -> tuple[int, Any]:
        refusal = self._unauthorized(request)
        if refusal is not None:
            return refusal
        payload = request.payload()
        chat_id, message_id, text = int(payload["chat_id"]), int(payload["message_id"]), str(payload["text"])
        if message_id in self.deleted:
            return 400, {"ok": False, "error_code": 400, "description": "Bad Request: message to edit not found"}
        self.edits.append((chat_id, message_id, text))
        before = self.messages.get(message_id, Sent(chat_id, None, text, message_id=message_id))
        self.messages[message_id] = replace(before, text=text, reply_markup=_markup(payload))
        message = {"message_id": message_id, "from": BOT_USER, "date": int(time.time()), "edit_date": int(time.time()),
                   "chat": {"id": chat_id, "type": "private" if chat_id > 0 else "supergroup"}, "text": text}
        return 200, {"ok": True, "result": message}

    def _send_message(self, request: Recorded) -> tuple[int, Any]:
        refusal = self._unauthorized(request)
        if refusal is not None:
            return refusal
        if self._failures:
            status, description, retry_after = self._failures.pop(0)
            error: dict[str, Any] = {"ok": False, "error_code": status, "description": description}
            if retry_after is not None:
                error["parameters"] = {"retry_after": retry_after}
            return status, error
        # python-telegram-bot posts a form whose non-string values are JSON-encoded; the Bot API
        # accepts that and JSON bodies alike.
        payload = request.payload()
        text = payload.get("text")
        if not payload.get("chat_id") or not text:
            missing = "message text is empty" if payload.get("chat_id") else "chat_id is empty"
            return 400, {"ok": False, "error_code": 400, "description": f"Bad Request: {missing}"}
        chat_id = int(payload["chat_id"])
        thread = payload.get("message_thread_id")
        sent = Sent(chat_id=chat_id, message_thread_id=int(thread) if thread is not None else None, text=str(text),
                    reply_markup=_markup(payload), message_id=next(self._message_ids))
        self.sent.append(sent)
        self.messages[sent.message_id] = sent
        message: dict[str, Any] = {
            "message_id": sent.message_id,
            "from": BOT_USER,
            "date": int(time.time()),
            "chat": {"id": chat_id, "type": "private" if chat_id > 0 else "supergroup"},
            "text": sent.text,
        }
        if sent.message_thread_id is not None:
            message.update(message_thread_id=sent.message_thread_id, is_topic_message=True)
        if sent.reply_markup is not None:
            message["reply_markup"] = sent.reply_markup
        return 200, {"ok": True, "result": message}

    def _delete_webhook(self, request: Recorded) -> tuple[int, Any]:
        refusal = self._unauthorized(request)
        if refusal is not None:
            return refusal
        if request.payload().get("drop_pending_updates") in (True, "true", "True"):
            self.pending.clear()
        self.webhook_url = None
        self.webhook.pop("allowed_updates", None)
        return 200, {"ok": True, "result": True, "description": "Webhook was deleted"}

    def _set_webhook(self, request: Recorded) -> tuple[int, Any]:
        refusal = self._unauthorized(request)
        if refusal is not None:
            return refusal
        payload = request.payload()
        url, secret = str(payload.get("url") or ""), payload.get("secret_token")
        if not url.startswith("https://"):
            return _bad_request("bad webhook: An HTTPS URL must be provided for webhook")
        if secret is not None and not re.fullmatch(r"[A-Za-z0-9_-]{1,256}", str(secret)):
            return _bad_request("secret token contains unallowed characters")
        allowed = payload.get("allowed_updates")
        self.webhook_url, self.webhook_secret = url, None if secret is None else str(secret)
        self.webhook.update(allowed_updates=json.loads(allowed) if isinstance(allowed, str) else allowed)
        return 200, {"ok": True, "result": True, "description": "Webhook was set"}

    async def _get_updates(self, request: Recorded) -> tuple[int, Any]:
        refusal = self._unauthorized(request)
        if refusal is not None:
            return refusal
        if self.webhook_url is not None:
            return _conflict("can't use getUpdates method while webhook is active; use deleteWebhook to delete "
                             "the webhook first")
        payload = request.payload()
        offset, timeout = int(payload.get("offset") or 0), float(payload.get("timeout") or 0)
        allowed = payload.get("allowed_updates")
        self.allowed_updates = json.loads(allowed) if isinstance(allowed, str) else allowed
        if offset:
            self.pending = [update for update in self.pending if update["update_id"] >= offset]
        poll = self._newest_poll = next(self._polls)
        self._arrived.set()  # a request still waiting ends, with 409
        deadline = asyncio.get_running_loop().time() + timeout
        self.polls_waiting += 1
        try:
            while not self.pending and not self.conflict and poll == self._newest_poll and not self._stopping:
                self._arrived.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._arrived.wait(),
                                           max(0.0, deadline - asyncio.get_running_loop().time()))
                if asyncio.get_running_loop().time() >= deadline:
                    break
        finally:
            self.polls_waiting -= 1
        if self.conflict or poll != self._newest_poll:
            return _conflict("terminated by other getUpdates request; make sure that only one bot instance is running")
        return 200, {"ok": True, "result": list(self.pending)}

    def _answer_callback_query(self, request: Recorded) -> tuple[int, Any]:
        refusal = self._unauthorized(request)
        if refusal is not None:
            return refusal
        payload = request.payload()
        if not payload.get("callback_query_id"):
            return 400, {"ok": False, "error_code": 400, "description": "Bad Request: query is too old and response "
                         "timeout expired or query ID is invalid"}
        show_alert = payload.get("show_alert") in (True, "true", "True")
        text = payload.get("text")
        self.callback_answers.append(CallbackAnswer(str(payload["callback_query_id"]), text, show_alert))
        return 200, {"ok": True, "result": True}


def _bad_request(description: str) -> tuple[int, Any]:
    return 400, {"ok": False, "error_code": 400, "description": f"Bad Request: {description}"}


def _conflict(description: str) -> tuple[int, Any]:
    return 409, {"ok": False, "error_code": 409, "description": f"Conflict: {description}"}


def _markup(payload: dict[str, Any]) -> dict[str, Any] | None:
    """`reply_markup` as sent: a form field holds it JSON-encoded."""
    markup = payload.get("reply_markup")
    return json.loads(markup) if isinstance(markup, str) else markup
