"""The chat platforms: each configured one is asked who its token belongs to, with the SDK the service
replies with, at the configured API URL (so the tests' fakes answer as the real platforms do)."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any

import discord
from github import Auth, BadCredentialsException, Github, GithubException
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient
from telegram import Bot
from telegram.error import InvalidToken, TelegramError

from activities.chat.platforms.discord import use_api_url
from activities.doctor.check import Check
from isolator.settings import Settings

TIMEOUT_SECONDS = 10


def platform_checks(settings: Settings) -> list[Coroutine[Any, Any, Check]]:
    """The checks of the platforms whose token is set, as coroutines to run together."""
    checks = []
    # A GitHub App (being built) adds its check here: `GET /app` with its JWT, then its events and
    # permissions against what the service needs. A personal token is checked as below.
    if settings.github_token:
        checks.append(github_token(settings))
    if settings.slack_bot_token:
        checks.append(slack(settings))
    if settings.telegram_bot_token:
        checks.append(telegram(settings))
    if settings.discord_bot_token:
        checks.append(discord_bot(settings))
    return checks


async def github_token(settings: Settings) -> Check:
    name = "GitHub: GITHUB_TOKEN (GET /user)"
    token = settings.github_token.get_secret_value()  # type: ignore[union-attr]

    def who() -> str:
        # retry=None: the doctor says what GitHub answered now, rather than waiting through retries.
        with Github(base_url=settings.github_api_url, auth=Auth.Token(token), timeout=TIMEOUT_SECONDS,
                    retry=None) as github:
            return github.get_user().login

    try:
        return Check.passed(name, f"the token is {await asyncio.to_thread(who)}'s")
    except BadCredentialsException:
        return Check.failed(name, "GitHub refuses the token (401 Bad credentials)",
                            "make a new token (Settings, Developer settings) and set GITHUB_TOKEN to it")
    except GithubException as error:
        return Check.failed(name, f"GitHub answered {error.status}",
                            "give the token the repositories' Issues, Pull requests and Contents permissions")
    except OSError as error:
        return Check.failed(name, f"GitHub cannot be reached ({type(error).__name__})",
                            "check GITHUB_API_URL and this machine's network")


async def slack(settings: Settings) -> Check:
    name = "Slack: SLACK_BOT_TOKEN (auth.test)"
    client = AsyncWebClient(token=settings.slack_bot_token.get_secret_value(),  # type: ignore[union-attr]
                            base_url=settings.slack_api_url, timeout=TIMEOUT_SECONDS)
    try:
        answer = await client.auth_test()
    except SlackApiError as error:
        return Check.failed(name, f"Slack refuses the token ({error.response.get('error')})",
                            "copy the Bot User OAuth Token (xoxb-...) of the installed app into SLACK_BOT_TOKEN")
    except (OSError, asyncio.TimeoutError) as error:
        return Check.failed(name, f"Slack cannot be reached ({type(error).__name__})",
                            "check SLACK_API_URL and this machine's network")
    return Check.passed(name, f"the bot is {answer.get('user')} in {answer.get('team')}")


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
    if webhook.last_error_message:
        return Check.failed(name, f"Telegram's last delivery to the webhook failed: {webhook.last_error_message} "
                                  f"({pending})",
                            "make PUBLIC_URL/webhooks/telegram reachable from Telegram over HTTPS, with "
                            "TELEGRAM_WEBHOOK_SECRET as the webhook's secret_token (docs/operations.md)")
    return Check.passed(name, f"the bot is @{username}; webhook {webhook.url or 'not set'}, {pending}")


async def discord_bot(settings: Settings) -> Check:
    name = "Discord: DISCORD_BOT_TOKEN (/users/@me)"
    use_api_url(settings)
    http = discord.http.HTTPClient(asyncio.get_running_loop())
    try:
        me = await asyncio.wait_for(
            http.static_login(settings.discord_bot_token.get_secret_value()),  # type: ignore[union-attr]
            TIMEOUT_SECONDS)
    except discord.LoginFailure:
        return Check.failed(name, "Discord refuses the token (401 Unauthorized)",
                            "reset the bot's token (developer portal, Bot) and set DISCORD_BOT_TOKEN to it")
    except (discord.HTTPException, OSError, asyncio.TimeoutError) as error:
        return Check.failed(name, f"Discord cannot be asked ({type(error).__name__})",
                            "check DISCORD_API_URL and this machine's network")
    finally:
        await http.close()
    return Check.passed(name, f"the bot is {me['username']}")
