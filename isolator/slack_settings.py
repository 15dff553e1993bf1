"""Slack's Socket Mode setting (docs/platforms.md#connect-slack). Settings inherits it.

With SLACK_APP_TOKEN (`xapp-…`), events, slash commands and button presses come over a WebSocket the
service opens (api/platforms/slack/socket.py), and nothing needs to reach this machine; without it,
over `POST /webhooks/slack*`.
"""

from __future__ import annotations

from pydantic import AliasChoices, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings


class SlackSocketSettings(BaseSettings):
    slack_app_token: SecretStr | None = Field(None, validation_alias=AliasChoices("SLACK_APP_TOKEN"))

    @field_validator("slack_app_token")
    @classmethod
    def _app_level_token(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value().startswith("xapp-"):
            # Never the value itself: it may be another secret pasted in the wrong place.
            raise ValueError("must be an app-level token (`xapp-…`, the app's Basic Information page, App-Level "
                             "Tokens, with the connections:write scope), not a bot or user token")
        return value

    @model_validator(mode="after")
    def _socket_has_a_bot_token(self) -> SlackSocketSettings:
        # The bot token is Settings' own (the webhook's too): read where both are known.
        if self.slack_app_token is not None and getattr(self, "slack_bot_token", "absent") is None:
            raise ValueError("SLACK_APP_TOKEN needs SLACK_BOT_TOKEN (xoxb-…): the bot replies with it")
        return self
