"""A press of a request's button (docs/approvals.md), from Discord's Interactions endpoint.

The presser must pass Discord's allow rule first: a refused person decides nothing. The press then
goes to `answer_press`, the one answer path. Discord wants an answer within 3 seconds: a press taken
is acknowledged without a word (DEFERRED_UPDATE_MESSAGE), as the environment's workflow edits the
request to its outcome and takes its buttons away; any other outcome is told to the presser alone.
"""

from __future__ import annotations

import re

import asyncpg
from fastapi.responses import JSONResponse
from temporalio.client import Client

from api.approvals import answer_press
from api.platforms.discord.events import DEFERRED_UPDATE_MESSAGE, PLATFORM, ButtonPress, only_to_them
from isolator.contracts.approvals import Press, parse_press_value
from isolator.settings import Settings
from isolator.trust import DiscordSender, admit_discord

# A request's code as runs make them: anything else in a button's value (a NUL, say) is not ours.
_CODE = re.compile(r"[A-Z0-9]{4,16}")


async def answer_button(settings: Settings, client: Client, pool: asyncpg.Pool, pressed: ButtonPress) -> JSONResponse:
    admission = admit_discord(DiscordSender(pressed.user_id, pressed.guild_id, pressed.roles), settings)
    if admission.refused is not None:
        return JSONResponse(only_to_them(admission.refused))
    # Ours are ASCII: anything else (a superscript digit for an option, say) is not read at all.
    value = parse_press_value(pressed.custom_id) if pressed.custom_id.isascii() else None
    if value is None or not _CODE.fullmatch(value.code):
        return JSONResponse(only_to_them("This button is not one of isolator's requests."))
    press = Press(value.code, value.choice, PLATFORM, user=pressed.user_id, name=f"<@{pressed.user_id}>",
                  option=value.option, conversation_id=pressed.channel_id)  # the channel is the conversation
    outcome = await answer_press(pool, client, settings, press)
    if outcome.outcome == "taken":
        return JSONResponse({"type": DEFERRED_UPDATE_MESSAGE})
    return JSONResponse(only_to_them(outcome.text))
