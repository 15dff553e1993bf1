"""Telegram by webhook with PUBLIC_URL: the API process tells Telegram where to send the updates, so the
operator never calls `setWebhook` by hand (docs/platforms.md, "Connect Telegram").

At start it asks `getWebhookInfo`, and calls `setWebhook` (PUBLIC_URL/webhooks/telegram, the secret as
its `secret_token`, the updates the webhook reads) only when Telegram shows something else: another
URL, other updates, or a delivery that failed (which a secret changed since would cause, and which
getWebhookInfo cannot show otherwise). Several API processes each check; the second finds it set.

Telegram out of reach is waited out in the background, as the poller does; a refusal (a URL that is not
HTTPS, a refused token) is logged once with Telegram's reason, and `isolator doctor` says it too.
`telegram_updates` is what the processes start: the poller, this, or nothing, as the settings say.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from typing import AsyncIterator, Literal

import asyncpg
from telegram import Bot
from telegram.error import BadRequest, Forbidden, InvalidToken, TelegramError
from temporalio.client import Client

from api.platforms.telegram.poller import ALLOWED_UPDATES, RETRY_SECONDS, polling_telegram
from isolator.settings import Settings
from isolator.telegram_here import doing

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WebhookOutcome:
    state: Literal["set", "already set", "refused"]
    reason: str = ""  # Telegram's words, when refused


async def set_webhook(settings: Settings) -> WebhookOutcome:
    """Make Telegram's webhook PUBLIC_URL/webhooks/telegram with the secret, unless it is so already;
    waits as long as Telegram cannot be reached."""
    url, token = settings.telegram_webhook_url, settings.telegram_bot_token
    assert url is not None and token is not None and settings.telegram_webhook_secret is not None
    secret = settings.telegram_webhook_secret.get_secret_value()
    wait = RETRY_SECONDS[0]
    while True:
        try:
            async with Bot(token.get_secret_value(), base_url=settings.telegram_api_url) as bot:
                info = await bot.get_webhook_info()
                if (info.url == url and sorted(info.allowed_updates or ()) == sorted(ALLOWED_UPDATES)
                        and not info.last_error_message):
                    return WebhookOutcome("already set")
                await bot.set_webhook(url, secret_token=secret, allowed_updates=ALLOWED_UPDATES)
                return WebhookOutcome("set")
        except (InvalidToken, BadRequest, Forbidden) as error:  # asking again would be answered the same
            return WebhookOutcome("refused", _readable(error, settings))
        except (TelegramError, OSError) as error:
            log.warning("telegram: its webhook not set yet, asked again in %.0f s: %s", wait,
                        _readable(error, settings))
            await asyncio.sleep(wait)
            wait = min(wait * 2, RETRY_SECONDS[1])


async def _set_and_say(settings: Settings) -> None:
    # httpx logs each request's URL at INFO, and a Bot API URL holds the bot's token.
    logging.getLogger("httpx").setLevel(max(logging.WARNING, logging.getLogger("httpx").getEffectiveLevel()))
    with doing("setting the webhook"):  # the doctor, in this process, leaves the webhook to it meanwhile
        outcome = await set_webhook(settings)
    if outcome.state == "refused":
        log.error("telegram: the webhook cannot be set to %s: %s. Check PUBLIC_URL (Telegram posts to HTTPS URLs "
                  "only) and TELEGRAM_BOT_TOKEN, or set TELEGRAM_MODE=polling", settings.telegram_webhook_url,
                  outcome.reason)
    else:
        log.info("telegram: its webhook is %s (%s)", settings.telegram_webhook_url, outcome.state)


@contextlib.asynccontextmanager
async def telegram_updates(settings: Settings, client: Client, pool: asyncpg.Pool) -> AsyncIterator[None]:
    """For the duration of the block: the poller (TELEGRAM_MODE=polling), or the webhook set in the
    background (webhook mode with PUBLIC_URL), or nothing."""
    if settings.telegram_polls:
        async with polling_telegram(settings, client, pool):
            yield
        return
    if settings.telegram_webhook_url is None:
        yield
        return
    setting = asyncio.create_task(_set_and_say(settings))
    try:
        yield
    finally:
        setting.cancel()
        await asyncio.gather(setting, return_exceptions=True)


def _readable(error: Exception, settings: Settings) -> str:
    said = f"{type(error).__name__}: {error}"
    for secret in (settings.telegram_bot_token, settings.telegram_webhook_secret):
        if secret is not None:
            said = said.replace(secret.get_secret_value(), "***")
    return said
