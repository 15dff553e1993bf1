"""Slack's Socket Mode setting (docs/platforms.md#slack). Settings inherits it.

With SLACK_APP_TOKEN (`xapp-…`), events, slash commands and button presses come over a WebSocket the
service opens, and nothing needs to reach this machine; without it, over `POST /webhooks/slack*`.
"""

from __future__ import annotations

from pydantic import AliasChoices, Field, SecretStr
from pydantic_settings import BaseSettings


class SlackSocketSettings(BaseSettings):
    slack_app_token: SecretStr | None = Field(None, validation_alias=AliasChoices("SLACK_APP_TOKEN"))
