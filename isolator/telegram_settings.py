"""Telegram's settings, and which way its updates come in (docs/platforms.md#telegram-without-a-public-url).
Settings inherits them.

`webhook`: Telegram posts each update to `POST /webhooks/telegram` (TELEGRAM_WEBHOOK_SECRET), which
needs a URL Telegram can reach. `polling`: the API process asks for them with `getUpdates`
(api/platforms/telegram/poller.py), and nothing needs to reach this machine.
"""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings


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

    @property
    def telegram_mode(self) -> Literal["webhook", "polling"]:
        if self.telegram_mode_setting is not None:
            return self.telegram_mode_setting
        return "webhook" if self.public_url or self.telegram_webhook_secret else "polling"

    @property
    def telegram_polls(self) -> bool:
        """Whether this service asks Telegram for its updates: polling, with a token to ask with."""
        return self.telegram_mode == "polling" and self.telegram_bot_token is not None
