"""Discord's check: whose the bot token is."""

from __future__ import annotations

import asyncio

import discord

from activities.chat.platforms.discord import use_api_url
from activities.doctor.check import TIMEOUT_SECONDS, Check
from isolator.settings import Settings


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
