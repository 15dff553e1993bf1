"""Replies to Discord through discord.py's REST client.

A reply is a message in the conversation's channel (its thread, or a DM), split at Discord's
2,000 characters. A reply to a slash command is a follow-up of its interaction instead, sent with
the token the interactions endpoint kept: the first follow-up replaces the "thinking…" message.
Past the token's 15 minutes the reply goes to the channel.

A reply's buttons are the message's components (action rows of buttons, the `custom_id` the button's
value); an update without buttons sends `components: []`, so an answered request loses its buttons.
"""

from __future__ import annotations

import hashlib
from datetime import timedelta

import asyncpg
import discord
from temporalio.exceptions import ApplicationError

from activities.chat.replies import Deliver, MessageGone, split_text
from isolator.contracts.approvals import Button
from isolator.contracts.discord import interaction_of
from isolator.contracts.message import ReplyInput
from isolator.settings import Settings

MAX_TEXT = 2000
TOKEN_LIFETIME = timedelta(minutes=14)  # Discord's is 15: a minute kept for the request itself
# Discord's limits on components: 5 buttons a row, 5 rows a message, 80 characters a label, 100 a custom_id.
BUTTONS_PER_ROW, MAX_ROWS, MAX_LABEL, MAX_CUSTOM_ID = 5, 5, 80, 100
_STYLES = {"primary": discord.ButtonStyle.primary, "danger": discord.ButtonStyle.danger,
           "default": discord.ButtonStyle.secondary}
# The id of a follow-up message is kept with its interaction's id, so that an update edits it through the webhook.
_FOLLOW_UP = "follow-up:"
# What a person can do about Discord's common final refusals (JSON error codes).
_FIXES = {
    10003: "the channel or thread no longer exists",
    50001: "give the bot access to the channel (View Channel, Send Messages, Send Messages in Threads)",
    50013: "give the bot the Send Messages and Send Messages in Threads permissions",
    50083: "the thread is archived and locked; unarchive it",
}


def use_api_url(settings: Settings) -> None:
    """Point discord.py at DISCORD_API_URL. Its base URL is a class attribute: one Discord API per process."""
    discord.http.Route.BASE = settings.discord_api_url.rstrip("/")


def make_deliverer(settings: Settings, pool: asyncpg.Pool) -> Deliver:
    token = settings.discord_bot_token.get_secret_value() if settings.discord_bot_token else None
    use_api_url(settings)

    async def deliver(reply: ReplyInput, replacing: str | None = None) -> str | None:
        if token is None:
            raise ApplicationError(
                "DISCORD_BOT_TOKEN is not set: cannot post replies to Discord",
                type="DiscordNotConfigured", non_retryable=True,
            )
        channel_id = _channel_id(reply.conversation_id)
        follow_up = await _interaction_token(pool, interaction_of(reply.answers))
        try:
            # A client per reply: the worker gives deliverers no shutdown hook, and `async with`
            # closes the HTTP session that login opens (checking the token on the way).
            async with discord.Client(intents=discord.Intents(guilds=True)) as client:  # no Gateway: intents unused
                await client.http.static_login(token)  # the session and the token check; no application lookup
                if replacing is not None:
                    try:
                        await _edit(client, pool, channel_id, replacing, reply.text, button_view(reply.buttons))
                    except discord.NotFound as error:  # Unknown Message: deleted; Unknown Webhook: its token expired
                        raise MessageGone(f"Discord: {error.text or error.status}") from None
                    return replacing
                if follow_up is not None:
                    return await _follow_up(client, *follow_up, reply.text, reply.buttons)
                channel = client.get_partial_messageable(channel_id)
                parts = split_text(reply.text, MAX_TEXT)
                # The buttons go on the first part: its id is the one an update edits (and strips them from).
                sent = [await channel.send(part, nonce=_nonce(reply.idempotency_key, number),
                                           **_with_buttons(reply.buttons if number == 0 else []))
                        for number, part in enumerate(parts)]
                return str(sent[0].id)
        except discord.LoginFailure:
            raise ApplicationError(
                "Discord rejected DISCORD_BOT_TOKEN; check the bot token (and DISCORD_API_URL)",
                type="DiscordRefused", non_retryable=True,
            ) from None
        except discord.HTTPException as error:
            raise _classify(error, channel_id) from None

    return deliver


def button_view(buttons: list[Button]) -> discord.ui.View | None:
    """The buttons as discord.py's view (action rows of up to 5); None, which sends `components: []`, for none."""
    if not buttons:
        return None
    if len(buttons) > BUTTONS_PER_ROW * MAX_ROWS:
        raise ApplicationError(f"Discord shows at most {BUTTONS_PER_ROW * MAX_ROWS} buttons a message, "
                               f"not {len(buttons)}", type="DiscordTooManyButtons", non_retryable=True)
    view = discord.ui.View(timeout=None)  # never times out: the presses come to the interactions endpoint
    for number, button in enumerate(buttons):
        if len(button.value) > MAX_CUSTOM_ID:
            raise ApplicationError(f"a button's value is longer than Discord's {MAX_CUSTOM_ID} characters: "
                                   f"{button.value!r}", type="DiscordBadButton", non_retryable=True)
        label = button.label if len(button.label) <= MAX_LABEL else button.label[: MAX_LABEL - 1] + "…"
        view.add_item(discord.ui.Button(label=label, custom_id=button.value, style=_STYLES[button.style],
                                        row=number // BUTTONS_PER_ROW))
    return view


def _with_buttons(buttons: list[Button]) -> dict[str, discord.ui.View]:
    """`view=` for a message with buttons; nothing for one without (a new message needs no empty components)."""
    view = button_view(buttons)
    return {"view": view} if view is not None else {}


def _nonce(idempotency_key: str, part: int) -> str:
    """The same for a retried send: Discord then returns the message it already has (discord.py enforces nonces)."""
    return str(int(hashlib.sha256(f"{idempotency_key}:{part}".encode()).hexdigest(), 16) % 10**18)


async def _interaction_token(pool: asyncpg.Pool, interaction_id: str | None) -> tuple[str, str, str] | None:
    """(interaction id, application id, token) while the token is good; None for channel messages."""
    if interaction_id is None:
        return None
    row = await pool.fetchrow(
        "SELECT application_id, token FROM discord_interactions WHERE interaction_id = $1 AND received_at > now() - $2::interval",
        interaction_id, TOKEN_LIFETIME,
    )
    return (interaction_id, row["application_id"], row["token"]) if row else None


async def _follow_up(client: discord.Client, interaction_id: str, application_id: str, token: str, text: str,
                     buttons: list[Button]) -> str:
    # partial(client=...): the webhook has the client's state, which discord.py needs to send buttons.
    webhook = discord.Webhook.partial(int(application_id), token, client=client)
    sent = [await webhook.send(part, wait=True, **_with_buttons(buttons if number == 0 else []))
            for number, part in enumerate(split_text(text, MAX_TEXT))]
    return f"{_FOLLOW_UP}{interaction_id}:{sent[0].id}"


async def _edit(client: discord.Client, pool: asyncpg.Pool, channel_id: int, message_id: str, text: str,
                view: discord.ui.View | None) -> None:
    """Update a message in place: a follow-up through its interaction's webhook, else in its channel.
    `view` None takes the message's buttons away."""
    content = text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"
    if not message_id.startswith(_FOLLOW_UP):
        message = client.get_partial_messageable(channel_id).get_partial_message(int(message_id))
        await message.edit(content=content, view=view)
        return
    interaction_id, _, follow_up_id = message_id.removeprefix(_FOLLOW_UP).partition(":")
    follow_up = await _interaction_token(pool, interaction_id)
    if follow_up is None:  # its token has expired: the text goes to the channel, a message later updates edit
        raise MessageGone("Discord: the interaction's token has expired")
    _, application_id, token = follow_up
    webhook = discord.Webhook.partial(int(application_id), token, client=client)
    await webhook.edit_message(int(follow_up_id), content=content, view=view)


def _channel_id(conversation_id: str) -> int:
    if not conversation_id.isdigit():
        raise ApplicationError(
            f"not a Discord conversation id (expected a channel or thread id): {conversation_id!r}",
            type="DiscordBadConversation", non_retryable=True,
        )
    return int(conversation_id)


def _classify(error: discord.HTTPException, channel_id: int) -> ApplicationError:
    """Discord's answer as a Temporal error: retried when waiting can help, final otherwise.

    discord.py already waits out rate limits itself; what reaches here is final or a server error.
    """
    reason = f"HTTP {error.status}, code {error.code}: {error.text or 'no message'}"
    if error.status == 429 or error.status >= 500:
        return ApplicationError(f"Discord is unavailable for now ({reason})", type="DiscordUnavailable")
    fix = f"; {_FIXES[error.code]}" if error.code in _FIXES else ""
    return ApplicationError(
        f"Discord refused the reply to channel {channel_id} ({reason}){fix}",
        type="DiscordRefused", non_retryable=True,
    )
