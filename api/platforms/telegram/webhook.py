"""POST /webhooks/telegram: Bot API updates, verified with TELEGRAM_WEBHOOK_SECRET.

Telegram sends the secret given to `setWebhook` in `X-Telegram-Bot-Api-Secret-Token`; it is compared
in constant time. The body is read with python-telegram-bot (`Update.de_json`, without a Bot: no
network call here). One conversation per chat and forum topic (`chat_id:topic_id`, topic 0 outside
topics); each update becomes one MessageWorkflow keyed by `update_id`, so Telegram's redeliveries,
and the same body posted again, are processed once. The workflow is started before Telegram gets its
200: an acknowledged update is never lost. What follows the secret's check (`handle_update`) is also
the poller's, which fetches the same updates with `getUpdates` when TELEGRAM_MODE=polling
(api/platforms/telegram/poller.py).

Which messages are answered (privacy mode shows a group bot little more than these anyway):
- private chats: every text message;
- groups: messages that mention the bot (`@isolator ...`), commands (`/status`, `/status@isolator`),
  and replies to the bot's messages.
Never: edits, non-text messages, service messages, channel posts, messages from bots, and commands
addressed to another bot (`/status@otherbot`).

Callback queries are presses of a reply's inline buttons (telegram_callbacks.py): a readable one is
decided and answered to its presser at once, and acknowledged with a 200 whatever became of it. Each
is taken once, by the callback query's own id (unique for good, where `update_id` starts again at
random after a week without updates): a replay is acknowledged and answers nothing.
"""

from __future__ import annotations

import json
import logging
import re
import secrets
from dataclasses import dataclass
from typing import Annotated, Any

import asyncpg
from fastapi import APIRouter, Depends, Request, status
from fastapi.responses import JSONResponse
from telegram import CallbackQuery, Message, MessageEntity, Update
from telegram.constants import ChatType
from temporalio.client import Client
from temporalio.service import RPCError

from api.deps import get_client, get_pool
from api.dispatch import UnusableText, start_message
from api.platforms.seen_presses import first_press
from api.platforms.telegram.callbacks import message_topic, take_press
from isolator import metrics
from isolator.settings import Settings
from isolator.trust import TelegramSender, admit_telegram, unset_rule

log = logging.getLogger(__name__)

PLATFORM = "telegram"
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
# A callback query's id is kept to take its press once (seen_presses.py); Telegram's are short and plain.
_QUERY_ID = re.compile(r"[!-~]{1,64}")


class MalformedUpdate(ValueError):
    """The body is JSON but not a Bot API Update this service can read."""


@dataclass(frozen=True)
class TelegramMessage:
    update_id: int
    chat_id: int
    # the forum topic (`message_thread_id`); 0 outside forum topics, the General topic included
    topic_id: int
    text: str
    sender: TelegramSender

    @property
    def conversation_id(self) -> str:
        return f"{self.chat_id}:{self.topic_id}"

    @property
    def message_key(self) -> str:
        return str(self.update_id)


def build_router(settings: Settings) -> APIRouter:
    assert settings.telegram_webhook_secret is not None, "mounted only when TELEGRAM_WEBHOOK_SECRET is set"
    expected = settings.telegram_webhook_secret.get_secret_value().encode()
    router = APIRouter(tags=["telegram"])
    if (warning := unset_rule(PLATFORM, settings)) is not None:
        log.warning(warning)

    @router.post("/webhooks/telegram")
    async def telegram_update(
        request: Request,
        client: Annotated[Client, Depends(get_client)],
        pool: Annotated[asyncpg.Pool, Depends(get_pool)],
    ) -> JSONResponse:
        given = request.headers.get(SECRET_HEADER, "").encode()
        if not secrets.compare_digest(given, expected):
            log.warning("telegram update refused: missing or wrong %s", SECRET_HEADER)  # never the value given
            metrics.SIGNATURE_FAILURES.labels("telegram").inc()
            return _answer(status.HTTP_401_UNAUTHORIZED, detail=f"missing or wrong {SECRET_HEADER}")
        try:
            update = parse_update(json.loads(await request.body()))
        except MalformedUpdate as error:
            return _answer(status.HTTP_400_BAD_REQUEST, detail=f"not a Telegram Update: {error}")
        except (ValueError, RecursionError):  # not UTF-8, not JSON, or nested too deep to read
            return _answer(status.HTTP_400_BAD_REQUEST, detail="the body is not JSON")
        try:
            handled = await handle_update(update, settings, client, pool)
        except RPCError as error:
            # Temporal is unreachable: a non-2xx makes Telegram deliver the update again later.
            log.warning("telegram update %s not started: %s", update.update_id, error)
            return _answer(status.HTTP_503_SERVICE_UNAVAILABLE, detail="cannot start the work now; retry later")
        return _answer(handled.status, **handled.body)

    return router


@dataclass(frozen=True)
class Handled:
    """What became of an update: the status the webhook answers with, and its body."""

    status: int
    body: dict[str, Any]


async def handle_update(update: Update, settings: Settings, client: Client, pool: asyncpg.Pool) -> Handled:
    """Start the update's workflow, or take its press, once: the webhook and the poller
    (api/platforms/telegram/poller.py) both come here. Raises RPCError when Temporal cannot start the work now."""
    if (query := update.callback_query) is not None:
        if not await first_press(pool, PLATFORM, query.id):
            return Handled(status.HTTP_200_OK, {"ignored": "this press was taken already"})
        return Handled(status.HTTP_200_OK, {"press": await take_press(query, settings, pool, client)})
    message = read_message(update, settings.bot_mention.removeprefix("@"))
    if isinstance(message, str):
        return Handled(status.HTTP_200_OK, {"ignored": message})
    try:
        handle = await start_message(
            settings,
            client,
            platform=PLATFORM,
            conversation_id=message.conversation_id,
            text=message.text,
            message_key=message.message_key,
            admission=admit_telegram(message.sender, settings),
        )
    except UnusableText as error:
        return Handled(status.HTTP_400_BAD_REQUEST, {"detail": f"not a Telegram Update: {error}"})
    return Handled(status.HTTP_200_OK, {"workflowId": handle.id})


def _answer(code: int, **body: Any) -> JSONResponse:
    # No `method` field: Telegram would run a body carrying one as a Bot API call.
    return JSONResponse({"ok": code < 300, **body}, status_code=code)


def parse_update(data: object) -> Update:
    """The Update in a webhook body; MalformedUpdate says what is wrong with it.

    `de_json` builds objects without checking types, so the fields read later are checked here.
    """
    if not isinstance(data, dict):
        raise MalformedUpdate("expected a JSON object")
    if not _is_int(data.get("update_id")):
        raise MalformedUpdate("`update_id` must be an integer")
    try:
        update = Update.de_json(data)
    except Exception as error:  # any shape de_json cannot build from is the sender's error, never a 500
        raise MalformedUpdate(f"cannot read it ({type(error).__name__})") from None
    if update.callback_query is not None and (problem := _callback_query_problem(update.callback_query)):
        raise MalformedUpdate(problem)
    message = update.message
    if message is None:
        return update
    if message.chat is None or not _is_int(message.chat.id) or not isinstance(message.chat.type, str):
        raise MalformedUpdate("`message.chat` needs an integer `id` and a `type`")
    if message.from_user is not None and not _is_int(message.from_user.id):
        raise MalformedUpdate("`message.from.id` must be an integer")
    if message.text is not None and not isinstance(message.text, str):
        raise MalformedUpdate("`message.text` must be a string")
    if message.text is not None and not _is_unicode(message.text):
        # parse_entities counts UTF-16 code units: a lone surrogate cannot be encoded to count them.
        raise MalformedUpdate("`message.text` is not valid Unicode (it has a lone surrogate)")
    if message.message_thread_id is not None and not _is_int(message.message_thread_id):
        raise MalformedUpdate("`message.message_thread_id` must be an integer")
    if not all(_is_int(entity.offset) and _is_int(entity.length) for entity in message.entities):
        raise MalformedUpdate("`message.entities` need integer `offset` and `length`")
    return update


def _callback_query_problem(query: CallbackQuery) -> str | None:
    if not isinstance(query.id, str) or not _QUERY_ID.fullmatch(query.id):
        return "`callback_query.id` must be a string of up to 64 printable ASCII characters"
    if query.from_user is None or not _is_int(query.from_user.id):
        return "`callback_query.from.id` must be an integer"
    if query.data is not None and not isinstance(query.data, str):
        return "`callback_query.data` must be a string"
    message = query.message
    if message is not None and (message.chat is None or not _is_int(message.chat.id)):
        return "`callback_query.message.chat` needs an integer `id`"
    if isinstance(message, Message) and not (message.message_thread_id is None or _is_int(message.message_thread_id)):
        return "`callback_query.message.message_thread_id` must be an integer"
    return None


def read_message(update: Update, bot_username: str) -> TelegramMessage | str:
    """The message to hand to a workflow, or why the update is ignored."""
    message = update.message
    if message is None:
        return "not a new message (edits, channel posts and the like are not answered)"
    if not message.text or not message.text.strip():
        return "the message has no text"
    sender = message.from_user
    if sender is None or sender.is_bot:
        return "the message is from a bot"
    command_target = _command_target(message.text)
    if command_target and command_target.lower() != bot_username.lower():
        return "the command is for another bot"
    addressed = (
        message.chat.type == ChatType.PRIVATE
        or command_target is not None
        or _mentions(message, bot_username)
        or _replies_to(message, bot_username)
    )
    if not addressed:
        return "in a group, only mentions of the bot, commands and replies to the bot are answered"
    if not (text := strip_leading_mention(message.text, bot_username)):
        return "the message is only a mention of the bot"
    return TelegramMessage(
        update_id=update.update_id,
        chat_id=message.chat.id,
        topic_id=message_topic(message),
        text=text,
        sender=TelegramSender(sender.id, sender.username if isinstance(sender.username, str) else None),
    )


def strip_leading_mention(text: str, bot_username: str) -> str:
    """`@isolator, fix the tests` -> `fix the tests`; `@isolator /status` then reads as the command."""
    leading = re.match(rf"\s*@{re.escape(bot_username)}\b[\s,:]*", text, re.IGNORECASE)
    return text[leading.end():].strip() if leading else text.strip()


def _command_target(text: str) -> str | None:
    """The bot a command names (`/status@isolator` -> `isolator`, `/status` -> ""); None: no command."""
    first = text.split(maxsplit=1)[0] if text.strip() else ""
    if len(first) < 2 or first[0] != "/" or first[1] == "@":
        return None
    return first.partition("@")[2]


def _mentions(message: Message, bot_username: str) -> bool:
    # Mention entities, not a text search: `@isolator` inside a code span is no mention.
    wanted = f"@{bot_username}".lower()
    return any(text.lower() == wanted for text in message.parse_entities([MessageEntity.MENTION]).values())


def _replies_to(message: Message, bot_username: str) -> bool:
    replied = message.reply_to_message
    # In a forum topic every message "replies" to the topic's creation message; that is no reply.
    if replied is None or replied.forum_topic_created is not None or replied.from_user is None:
        return False
    author = replied.from_user
    username = author.username if isinstance(author.username, str) else ""  # de_json does not check types
    return bool(author.is_bot) and username.lower() == bot_username.lower()


def _is_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
