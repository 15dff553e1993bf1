"""POST /webhooks/discord: Discord's Interactions endpoint, for the `/isolator <text>` slash command
and the presses of a request's buttons (api/platforms/discord/components.py).

Every request is verified with Ed25519 (PyNaCl) against DISCORD_PUBLIC_KEY, over the
`X-Signature-Timestamp` header followed by the body, as Discord signs it; anything else gets 401
and starts nothing. A PING is answered with a PONG. A command is answered at once with a deferred
response ("isolator is thinking…", well within Discord's 3 seconds), after its MessageWorkflow has
started: the workflow's replies then arrive as follow-ups, sent with the interaction's token, which
is kept in `discord_interactions` for the worker. The workflow is keyed by the interaction id, and a
press is taken once by its interaction id (seen_presses.py): the same signed request posted again
(its signed timestamp is not checked for age) starts nothing.
"""

from __future__ import annotations

import json
import logging
from typing import Annotated

import asyncpg
from fastapi import APIRouter, Depends, Request, status
from fastapi.responses import JSONResponse
from nacl.exceptions import BadSignatureError
from nacl.signing import VerifyKey
from starlette.datastructures import Headers
from temporalio.client import Client
from temporalio.service import RPCError

from api.deps import get_client, get_pool
from api.dispatch import UnusableText, start_message
from api.platforms.discord.components import answer_button
from api.platforms.discord.events import (
    DEFERRED_CHANNEL_MESSAGE,
    DEFERRED_UPDATE_MESSAGE,
    PLATFORM,
    PONG,
    ButtonPress,
    MalformedInteraction,
    NotForUs,
    Ping,
    SlashCommand,
    only_to_them,
    read_interaction,
)
from api.platforms.seen_presses import first_press
from isolator import metrics
from isolator.settings import Settings
from isolator.trust import DiscordSender, admit_discord, unset_rule
from workflows.chat.commands import HANDLERS

log = logging.getLogger(__name__)

SIGNATURE_HEADER = "X-Signature-Ed25519"
TIMESTAMP_HEADER = "X-Signature-Timestamp"
_COMMAND_NAMES = frozenset(HANDLERS)


def build_router(settings: Settings) -> APIRouter:
    assert settings.discord_public_key is not None, "mounted only when DISCORD_PUBLIC_KEY is set"
    verify_key = VerifyKey(bytes.fromhex(settings.discord_public_key))
    router = APIRouter(tags=["discord"])
    if (warning := unset_rule(PLATFORM, settings)) is not None:
        log.warning(warning)

    @router.post("/webhooks/discord")
    async def discord_interaction(
        request: Request,
        client: Annotated[Client, Depends(get_client)],
        pool: Annotated[asyncpg.Pool, Depends(get_pool)],
    ) -> JSONResponse:
        body = await request.body()
        if not is_signed(verify_key, request.headers, body):
            log.warning("discord interaction refused: missing or invalid signature")
            metrics.SIGNATURE_FAILURES.labels("discord").inc()
            return _error(status.HTTP_401_UNAUTHORIZED, f"missing or invalid {SIGNATURE_HEADER} / {TIMESTAMP_HEADER}")
        try:
            interaction = read_interaction(json.loads(body), _COMMAND_NAMES)
        except MalformedInteraction as error:
            return _error(status.HTTP_400_BAD_REQUEST, f"not a Discord interaction: {error}")
        except (ValueError, RecursionError):  # not UTF-8, not JSON, or nested too deep to read
            return _error(status.HTTP_400_BAD_REQUEST, "the body is not JSON")
        if isinstance(interaction, Ping):
            return JSONResponse({"type": PONG})
        if isinstance(interaction, NotForUs):
            return _tell_only_them(interaction.reason)
        if isinstance(interaction, ButtonPress):
            if not await first_press(pool, PLATFORM, interaction.interaction_id):
                # Discord sends an interaction once: this is its signed request posted again. Nothing is said.
                return JSONResponse({"type": DEFERRED_UPDATE_MESSAGE})
            return await answer_button(settings, client, pool, interaction)
        return await _take(settings, client, pool, interaction)

    return router


def is_signed(verify_key: VerifyKey, headers: Headers, body: bytes) -> bool:
    """Discord's Ed25519 signature of `timestamp + body`; a malformed header is no signature."""
    signature, timestamp = headers.get(SIGNATURE_HEADER, ""), headers.get(TIMESTAMP_HEADER, "")
    try:
        verify_key.verify(timestamp.encode() + body, bytes.fromhex(signature))
    except (BadSignatureError, ValueError, UnicodeEncodeError):
        return False
    return True


async def _take(settings: Settings, client: Client, pool: asyncpg.Pool, command: SlashCommand) -> JSONResponse:
    admission = admit_discord(DiscordSender(command.user_id, command.guild_id, command.roles), settings)
    if admission.refused is not None:
        # Answered at once, to its user alone: nobody else is bothered, so every refused command is
        # answered (a deferred one left unanswered would show "thinking…" until Discord gives up).
        admission.answered = True
    else:
        await remember_token(pool, command)  # the follow-ups' token: a refused command has none
    try:
        await start_message(
            settings,
            client,
            platform=PLATFORM,
            conversation_id=command.conversation_id,
            text=command.text,
            message_key=command.message_key,
            admission=admission,
        )
    except UnusableText as error:
        return _tell_only_them(f"Cannot read that command: {error}. Write it again as plain text.")
    except RPCError as error:
        # Discord does not send an interaction twice: the user is told to try again.
        log.warning("discord interaction %s not started: %s", command.interaction_id, error)
        return _tell_only_them("isolator cannot start the work now; please try the command again in a minute.")
    if admission.refused is not None:
        return _tell_only_them(admission.refused)
    return JSONResponse({"type": DEFERRED_CHANNEL_MESSAGE})


async def remember_token(pool: asyncpg.Pool, command: SlashCommand) -> None:
    """Keep the token the follow-ups are sent with; prune tokens long expired (valid for 15 minutes)."""
    await pool.execute(
        """WITH pruned AS (DELETE FROM discord_interactions WHERE received_at < now() - interval '1 hour')
           INSERT INTO discord_interactions (interaction_id, application_id, token) VALUES ($1, $2, $3)
           ON CONFLICT (interaction_id) DO NOTHING""",
        command.interaction_id, command.application_id, command.token,
    )


def _tell_only_them(text: str) -> JSONResponse:
    return JSONResponse(only_to_them(text))


def _error(code: int, detail: str) -> JSONResponse:
    return JSONResponse({"detail": detail}, status_code=code)
