"""Presses of a reply's inline buttons: the webhook's `callback_query` updates (docs/approvals.md).

A press is checked against Telegram's allow rule (TELEGRAM_ALLOWED_USERS) and then handed to the one
answer path, `api.approvals.answer_press`. Every callback query is answered (`answerCallbackQuery`), or
the presser's button spins until Telegram gives up: a toast when the press is taken, an alert when it
is not. Both are seen by the presser alone, so a refusal tells nobody else in the chat.
"""

from __future__ import annotations

import logging

import asyncpg
from telegram import Bot, CallbackQuery, Message
from telegram.constants import CallbackQueryLimit
from telegram.error import TelegramError
from temporalio.client import Client

from api.approvals import answer_press
from isolator.contracts.approvals import Press, PressOutcome, parse_press_value
from isolator.settings import Settings
from isolator.trust import TelegramSender, admit_telegram

log = logging.getLogger(__name__)

NOT_OURS = "This button is not one this bot answers."
TAKEN = "Answer taken."


def message_topic(message: Message) -> int:
    """The forum topic of a message (`message_thread_id`); 0 outside forum topics, the General topic included.
    Outside forum topics `message_thread_id` only names a chain of replies: not a conversation."""
    return message.message_thread_id if message.is_topic_message and message.message_thread_id else 0


async def take_press(query: CallbackQuery, settings: Settings, pool: asyncpg.Pool, client: Client) -> str:
    """Decide a press and tell the presser; returns what became of it (`taken`, `refused`, ..., `not ours`)."""
    pressed = parse_press_value(query.data) if query.data else None
    if pressed is None:  # another bot's keyboard, a game, or data someone made up
        await _tell(settings, query.id, NOT_OURS, alert=True)
        return "not ours"
    sender = query.from_user
    username = sender.username if isinstance(sender.username, str) and sender.username else None
    refused = admit_telegram(TelegramSender(sender.id, username), settings).refused
    if refused is not None:  # not allowed to talk to the bot at all: nothing is decided
        outcome = PressOutcome("refused", refused)
    else:
        first_name = sender.first_name if isinstance(sender.first_name, str) else ""
        outcome = await answer_press(pool, client, settings, Press(
            pressed.code, pressed.choice, "telegram", user=str(sender.id), option=pressed.option,
            name=f"@{username}" if username else first_name, conversation_id=_conversation_id(query)))
    log.info("telegram press %s:%s by user %s: %s", pressed.code, pressed.choice, sender.id, outcome.outcome)
    if outcome.outcome == "taken":
        await _tell(settings, query.id, outcome.text or TAKEN, alert=False)
    else:
        await _tell(settings, query.id, outcome.text, alert=True)
    return outcome.outcome


def _conversation_id(query: CallbackQuery) -> str | None:
    """`chat_id:topic_id`, as the webhook names a message's conversation; None when Telegram does not say
    (a message too old to be sent along has no topic to read)."""
    message = query.message
    return f"{message.chat.id}:{message_topic(message)}" if isinstance(message, Message) else None


async def _tell(settings: Settings, query_id: str, text: str, *, alert: bool) -> None:
    """answerCallbackQuery. A failure is logged, never raised: the press is decided either way, and a
    non-2xx would make Telegram deliver the same press again."""
    if settings.telegram_bot_token is None:
        log.warning("telegram press not answered: TELEGRAM_BOT_TOKEN is not set")
        return
    token = settings.telegram_bot_token.get_secret_value()
    # Alerts are plain text, and Telegram refuses longer ones.
    text = text.replace("`", "")[: CallbackQueryLimit.ANSWER_CALLBACK_QUERY_TEXT_LENGTH]
    try:
        async with Bot(token, base_url=settings.telegram_api_url) as bot:
            await bot.answer_callback_query(query_id, text=text, show_alert=alert)
    except TelegramError as error:
        reason = f"{type(error).__name__}: {error.message}".replace(token, "<TELEGRAM_BOT_TOKEN>")
        log.warning("telegram press not answered (%s)", reason)

