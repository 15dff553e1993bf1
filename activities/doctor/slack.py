"""Slack's check: whose the bot token is."""

from __future__ import annotations

import asyncio

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from activities.doctor.check import TIMEOUT_SECONDS, Check
from isolator.settings import Settings


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
