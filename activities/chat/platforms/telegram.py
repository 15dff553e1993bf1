"""Replies to Telegram: `sendMessage` into the conversation's chat and forum topic, through python-telegram-bot.

A reply's buttons are an inline keyboard whose presses come back as `callback_query` updates
(api/platforms/telegram/callbacks.py); an edit without buttons takes the keyboard away.
"""

from __future__ import annotations

from datetime import timedelta

from telegram import Bot, InlineKeyboardButton, InlineKeyboardMarkup
from telegram.constants import InlineKeyboardButtonLimit, KeyboardButtonStyle
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Forbidden,
    InvalidToken,
    NetworkError,
    RetryAfter,
    TelegramError,
)
from temporalio.exceptions import ApplicationError

from activities.chat.replies import Deliver, MessageGone
from isolator.contracts.approvals import Button
from isolator.contracts.message import ReplyInput
from isolator.settings import Settings

# The Bot API refuses longer texts with a 400 that retrying cannot fix; a cut reply beats none.
MAX_TEXT = 4096
_CUT = "\n… (cut: longer than Telegram allows)"
# Labels this short fit two to a row on a phone; longer ones get a row each, never cut off.
_PAIRED_LABEL = 16
_STYLES = {"primary": KeyboardButtonStyle.PRIMARY, "danger": KeyboardButtonStyle.DANGER}


def make_deliverer(settings: Settings) -> Deliver:
    token = settings.telegram_bot_token.get_secret_value() if settings.telegram_bot_token else None

    async def deliver(reply: ReplyInput, replacing: str | None = None) -> str | None:
        if token is None:
            raise ApplicationError(
                "TELEGRAM_BOT_TOKEN is not set: cannot send replies to Telegram",
                type="TelegramNotConfigured", non_retryable=True,
            )
        chat_id, topic_id = split_conversation_id(reply.conversation_id)
        keyboard = inline_keyboard(reply.buttons)
        try:
            # A Bot per reply: the worker gives deliverers no shutdown hook, and `async with`
            # opens and closes its HTTP client (and checks the token with getMe) around the send.
            async with Bot(token, base_url=settings.telegram_api_url) as bot:
                if replacing is not None:  # a message updated in place: editMessageText
                    await _edit(bot, chat_id, int(replacing), _fit(reply.text), keyboard)
                    return replacing
                sent = await bot.send_message(chat_id, _fit(reply.text), message_thread_id=topic_id or None,
                                              reply_markup=keyboard)
                return str(sent.message_id)
        except TelegramError as error:
            # `from None`: the chained SDK error can carry the token (InvalidToken's message does),
            # and Temporal records causes in the workflow history.
            raise _classify(error, chat_id, token) from None

    return deliver


def inline_keyboard(buttons: list[Button]) -> InlineKeyboardMarkup | None:
    """The buttons as an inline keyboard, two to a row when every label is short; None without buttons."""
    if not buttons:
        return None
    for button in buttons:
        if len(button.value.encode()) > InlineKeyboardButtonLimit.MAX_CALLBACK_DATA:
            # Telegram refuses the whole message for it; a value this long is a bug of ours, not the chat's.
            raise ApplicationError(
                f"button {button.label!r}: its value is longer than Telegram's "
                f"{InlineKeyboardButtonLimit.MAX_CALLBACK_DATA} bytes of callback data",
                type="TelegramBadButton", non_retryable=True,
            )
    keys = [InlineKeyboardButton(button.label, callback_data=button.value, style=_STYLES.get(button.style))
            for button in buttons]
    per_row = 2 if all(len(button.label) <= _PAIRED_LABEL for button in buttons) else 1
    return InlineKeyboardMarkup([keys[start:start + per_row] for start in range(0, len(keys), per_row)])


async def _edit(bot: Bot, chat_id: int, message_id: int, text: str, keyboard: InlineKeyboardMarkup | None) -> None:
    try:
        # Without reply_markup Telegram drops the message's keyboard: an answered request loses its buttons.
        await bot.edit_message_text(text, chat_id=chat_id, message_id=message_id, reply_markup=keyboard)
    except BadRequest as error:
        reason = error.message.lower()
        if "message is not modified" in reason:  # the same text again: it already reads so
            return
        if "message to edit not found" in reason or "message can't be edited" in reason:
            raise MessageGone(f"Telegram: {error.message}") from None
        raise


def split_conversation_id(conversation_id: str) -> tuple[int, int]:
    """`chat_id:topic_id` (as the webhook builds it) into its chat and forum topic (0: none)."""
    chat, _, topic = conversation_id.rpartition(":")
    try:
        return int(chat), int(topic)
    except ValueError:
        raise ApplicationError(
            f"not a Telegram conversation id (expected `chat_id:topic_id`): {conversation_id!r}",
            type="TelegramBadConversation", non_retryable=True,
        ) from None


def _fit(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - len(_CUT)] + _CUT


def _classify(error: TelegramError, chat_id: int, token: str) -> ApplicationError:
    """Telegram's answer as a Temporal error: retried when waiting can help, final otherwise."""
    reason = f"{type(error).__name__}: {error.message}".replace(token, "<TELEGRAM_BOT_TOKEN>")
    if isinstance(error, RetryAfter):
        delay = error.retry_after
        return ApplicationError(
            f"Telegram rate limit on sendMessage ({reason})",
            type="TelegramUnavailable",
            next_retry_delay=delay if isinstance(delay, timedelta) else timedelta(seconds=delay),
        )
    if isinstance(error, InvalidToken):
        return ApplicationError(
            "Telegram rejected TELEGRAM_BOT_TOKEN; check the token from @BotFather (and TELEGRAM_API_URL, "
            "whose 404s read as a bad token)",
            type="TelegramRefused", non_retryable=True,
        )
    if isinstance(error, ChatMigrated):
        return ApplicationError(
            f"Telegram chat {chat_id} became supergroup {error.new_chat_id}; write to the bot there again",
            type="TelegramRefused", non_retryable=True,
        )
    # BadRequest subclasses NetworkError, so it is told apart first.
    if isinstance(error, (BadRequest, Forbidden)):
        return ApplicationError(
            f"Telegram refused sendMessage to chat {chat_id} ({reason}); check that the chat exists "
            "and the bot is still a member and not blocked",
            type="TelegramRefused", non_retryable=True,
        )
    if isinstance(error, NetworkError):  # TimedOut, connection failures and Telegram's 5xx
        return ApplicationError(f"Telegram sendMessage is unavailable for now ({reason})", type="TelegramUnavailable")
    return ApplicationError(f"Telegram sendMessage failed ({reason})", type="TelegramRefused", non_retryable=True)
