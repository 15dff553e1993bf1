"""Slack's checks: whose the bot token is, and, with SLACK_APP_TOKEN, that Socket Mode opens."""

from __future__ import annotations

import asyncio
import json

import aiohttp
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


async def slack_socket(settings: Settings) -> Check:
    """apps.connections.open with the app-level token, then the socket it names opened until Slack's
    `hello`, and closed: what the API process does at its start (api/platforms/slack/socket.py). An
    envelope Slack happens to send this connection is not acknowledged, so Slack sends it again to another."""
    name = "Slack: SLACK_APP_TOKEN (apps.connections.open, Socket Mode)"
    client = AsyncWebClient(base_url=settings.slack_api_url, timeout=TIMEOUT_SECONDS)
    try:
        opened = await client.apps_connections_open(
            app_token=settings.slack_app_token.get_secret_value())  # type: ignore[union-attr]
    except SlackApiError as error:
        reason = error.response.get("error")
        if reason == "not_allowed_token_type":
            return Check.failed(name, "SLACK_APP_TOKEN is not an app-level token", _NEW_TOKEN)
        if reason == "missing_scope":
            return Check.failed(name, "the app-level token lacks the connections:write scope", _NEW_TOKEN)
        return Check.failed(name, f"Slack refuses the token ({reason})", _NEW_TOKEN)
    except (OSError, asyncio.TimeoutError) as error:
        return Check.failed(name, f"Slack cannot be reached ({type(error).__name__})",
                            "check SLACK_API_URL and this machine's network")
    try:
        greeting = await _hello(opened["url"])
    except (aiohttp.ClientError, OSError, asyncio.TimeoutError, ValueError) as error:
        return Check.failed(name, f"the Socket Mode connection does not open ({type(error).__name__})",
                            "let this machine open WebSockets (wss://, port 443) to Slack; a proxy must pass them")
    if greeting.get("type") != "hello":
        return Check.failed(name, f"Slack answered the connection with {greeting.get('type')!r}, not hello",
                            "turn Socket Mode on in the app's settings (Socket Mode page), then run this again")
    return Check.passed(name, "the socket opens; events come over it, no public URL needed")


_NEW_TOKEN = ("make an app-level token with the connections:write scope (the app's Basic Information page, "
              "App-Level Tokens) and put it (xapp-...) in SLACK_APP_TOKEN")


async def _hello(url: str) -> dict:
    """The first frame Slack sends on a new connection, which is then closed."""
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=TIMEOUT_SECONDS)) as session:
        async with session.ws_connect(url) as socket:
            frame = await socket.receive(timeout=TIMEOUT_SECONDS)
            await socket.close()
    if frame.type != aiohttp.WSMsgType.TEXT:
        raise ValueError(f"a {frame.type.name} frame")
    greeting = json.loads(frame.data)
    if not isinstance(greeting, dict):
        raise ValueError("not a JSON object")
    return greeting
