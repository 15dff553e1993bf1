"""Telegram's settings, and which way its updates come in (docs/platforms.md#telegram-without-a-public-url).
Settings inherits them.

`webhook`: Telegram posts each update to `POST /webhooks/telegram` (TELEGRAM_WEBHOOK_SECRET), which
needs a URL Telegram can reach; with PUBLIC_URL the API process sets that webhook itself at start
(api/platforms/telegram/webhook_setup.py). `polling`: the API process asks for them with `getUpdates`
(api/platforms/telegram/poller.py), and nothing needs to reach this machine.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings

WEBHOOK_PATH = "/webhooks/telegram"
# What setWebhook takes as its secret_token: 1 to 256 of these.
_SECRET_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,256}")


class TelegramSettings(BaseSettings):
    telegram_bot_token: SecretStr | None = Field(None, validation_alias=AliasChoices("TELEGRAM_BOT_TOKEN"))
    telegram_webhook_secret: SecretStr | None = Field(None, validation_alias=AliasChoices("TELEGRAM_WEBHOOK_SECRET"))
    telegram_api_url: str = Field("https://api.telegram.org/bot", validation_alias=AliasChoices("TELEGRAM_API_URL"))
    # Unset: `polling` when there is no PUBLIC_URL and no TELEGRAM_WEBHOOK_SECRET, since then no webhook
    # can be meant; a set-up that has either keeps its webhook, as before this setting existed.
    telegram_mode_setting: Literal["webhook", "polling"] | None = Field(
        None, validation_alias=AliasChoices("TELEGRAM_MODE"))
    # Where users reach this server (`https://isolator.example.org`): a run's last chat message links its
    # dashboard page, and with it Telegram's updates come by webhook unless TELEGRAM_MODE says otherwise.
    # Unset: no link.
    public_url: str | None = Field(None, pattern=r"^https?://[^\s]+$", validation_alias=AliasChoices("PUBLIC_URL"))

    @model_validator(mode="after")
    def _polling_has_a_token(self) -> TelegramSettings:
        if self.telegram_mode_setting == "polling" and self.telegram_bot_token is None:
            raise ValueError("TELEGRAM_MODE=polling needs TELEGRAM_BOT_TOKEN")
        return self

    @model_validator(mode="after")
    def _webhook_has_a_secret(self) -> TelegramSettings:
        """A webhook is refused without its secret (nothing could be verified), and with PUBLIC_URL this
        service sets it itself, with the secret as setWebhook's secret_token."""
        if self.telegram_bot_token is None or self.telegram_mode != "webhook":
            return self
        if self.telegram_webhook_secret is None:
            why = "TELEGRAM_MODE=webhook" if self.telegram_mode_setting else "PUBLIC_URL (TELEGRAM_MODE=webhook)"
            raise ValueError(f"{why} needs TELEGRAM_WEBHOOK_SECRET: Telegram sends it with each update, and "
                             "updates without it are refused. Set it (letters, digits, _ and -), or set "
                             "TELEGRAM_MODE=polling to fetch the updates instead")
        if self.public_url and not _SECRET_TOKEN.fullmatch(self.telegram_webhook_secret.get_secret_value()):
            raise ValueError("TELEGRAM_WEBHOOK_SECRET: setWebhook takes 1 to 256 letters, digits, _ and - only")
        return self

    @property
    def telegram_webhook_url(self) -> str | None:
        """Where Telegram is told to send the updates: set at start when in webhook mode with PUBLIC_URL."""
        if self.telegram_bot_token is None or self.telegram_mode != "webhook" or not self.public_url:
            return None
        return self.public_url.rstrip("/") + WEBHOOK_PATH

    @property
    def telegram_mode(self) -> Literal["webhook", "polling"]:
        if self.telegram_mode_setting is not None:
            return self.telegram_mode_setting
        return "webhook" if self.public_url or self.telegram_webhook_secret else "polling"

    @property
    def telegram_polls(self) -> bool:
        """Whether this service asks Telegram for its updates: polling, with a token to ask with."""
        return self.telegram_mode == "polling" and self.telegram_bot_token is not None
