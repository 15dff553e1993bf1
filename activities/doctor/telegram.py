"""Telegram's check: the bot, and its webhook's state against the way its updates come in (TELEGRAM_MODE):
by polling no webhook may be set, by webhook with PUBLIC_URL it must be PUBLIC_URL/webhooks/telegram, and
Telegram's last delivery to it must not have failed."""

from __future__ import annotations

from telegram import Bot
from telegram.error import InvalidToken, TelegramError

from activities.doctor.check import Check
from isolator.settings import Settings
from isolator.telegram_here import doing_here


async def telegram(settings: Settings) -> Check:
    name = "Telegram: TELEGRAM_BOT_TOKEN (getMe, getWebhookInfo)"
    try:
        # Entering the Bot asks getMe: a refused token raises InvalidToken there.
        async with Bot(settings.telegram_bot_token.get_secret_value(),  # type: ignore[union-attr]
                       base_url=settings.telegram_api_url) as bot:
            webhook = await bot.get_webhook_info()
            username = bot.username
    except InvalidToken:
        return Check.failed(name, "Telegram refuses the token (401 Unauthorized)",
                            "copy the token @BotFather gave into TELEGRAM_BOT_TOKEN")
    except TelegramError as error:
        # Its message may quote the URL, which holds the token: say only its kind.
        return Check.failed(name, f"Telegram cannot be asked ({type(error).__name__})",
                            "check TELEGRAM_API_URL and this machine's network")
    pending = f"{webhook.pending_update_count} update(s) waiting"
    # This process's poller deletes a webhook at its start, and its setting sets it: what is found meanwhile
    # is theirs to mend (they log what they could not).
    if settings.telegram_polls and webhook.url and not doing_here("polling"):
        return Check.failed(name, f"a webhook is set ({webhook.url}) though TELEGRAM_MODE=polling: while it is, "
                                  f"Telegram refuses getUpdates (409) ({pending})",
                            "start the API or `isolator dev` again: its poller deletes the webhook at start. If "
                            "another service receives this bot's updates at that URL, give each its own bot "
                            "(@BotFather), since one would take the other's updates")
    expected = settings.telegram_webhook_url
    if expected is not None and webhook.url != expected and not doing_here("setting the webhook"):
        return Check.failed(name, f"the webhook is {webhook.url or 'not set'}, not PUBLIC_URL/webhooks/telegram "
                                  f"({expected}) ({pending})",
                            "start the API again: it sets the webhook at start, and its log says what Telegram "
                            "answered; or correct PUBLIC_URL")
    if webhook.last_error_message:
        return Check.failed(name, f"Telegram's last delivery to the webhook failed: {webhook.last_error_message} "
                                  f"({pending})",
                            "make PUBLIC_URL/webhooks/telegram reachable from Telegram over HTTPS, with "
                            "TELEGRAM_WEBHOOK_SECRET as the webhook's secret_token (docs/operations.md)")
    return Check.passed(name, f"the bot is @{username}; webhook {webhook.url or 'not set'}, {pending}")
