"""The chat platforms (one module each): each configured one is asked who its token belongs to, with the SDK the service
replies with, at the configured API URL (so the tests' fakes answer as the real platforms do)."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any

from activities.doctor import discord_bot, github, slack, telegram
from activities.doctor.check import Check
from isolator.settings import Settings


def platform_checks(settings: Settings) -> list[Coroutine[Any, Any, Check]]:
    """The checks of the platforms whose token is set, as coroutines to run together."""
    checks = []
    # The App (GET /app with its JWT, its events and permissions against what the service needs), from the
    # environment or stored by the dashboard; a personal token as well when it is set.
    checks.append(github.github_app(settings))
    if settings.github_token:
        checks.append(github.github_token(settings))
    if settings.slack_bot_token:
        checks.append(slack.slack(settings))
    if settings.slack_app_token:
        checks.append(slack.slack_socket(settings))
    if settings.telegram_bot_token:
        checks.append(telegram.telegram(settings))
    if settings.discord_bot_token:
        checks.append(discord_bot.discord_bot(settings))
    return checks
