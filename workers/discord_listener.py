"""`isolator discord`: Discord's Gateway, through discord.py, turned into workflow starts.

Which messages are answered:
- in a text channel: messages that mention the bot; a thread is started on the message, and that
  thread is the conversation (a thread made from a message has the message's id);
- in a thread: messages that mention the bot or reply to one of its messages;
- in a DM: every message.
Never: messages of bots (this one included) and webhooks, system messages, edits.

Archiving or deleting a thread that is a conversation closes it. Each message starts one
MessageWorkflow keyed by its id, and each close one keyed by the thread and its archive time, so a
reconnect that replays events starts nothing twice. The Gateway does not deliver an event again,
so a start that Temporal refuses for now is retried here, for up to START_PATIENCE.
"""

from __future__ import annotations

import asyncio
import logging
from contextlib import asynccontextmanager
from typing import AsyncIterator, Literal

import asyncpg
import discord
import yarl
from discord.gateway import DiscordWebSocket
from temporalio.client import Client
from temporalio.service import RPCError

from activities.chat.platforms.discord import use_api_url
from activities.database import create_pool
from api.dispatch import UnusableText, start_message
from api.platforms.discord.events import PLATFORM, SLASH_COMMAND, strip_bot_mentions, thread_name
from isolator.contracts.trust import Admission
from isolator.payloads import connect
from isolator.settings import Settings
from isolator.trust import DiscordSender, admit_discord, unset_rule
from workers.serving import stop_on_signals

log = logging.getLogger(__name__)

START_PATIENCE = 600.0  # seconds a message waits for Temporal before it is given up (and logged)
_ANSWERED_TYPES = {discord.MessageType.default, discord.MessageType.reply}
_THREAD_EXISTS = 160004  # "A thread has already been created for this message": a replayed mention


class DiscordListener(discord.Client):
    def __init__(self, settings: Settings, temporal: Client, pool: asyncpg.Pool) -> None:
        intents = discord.Intents(guilds=True, guild_messages=True, dm_messages=True, message_content=True)
        super().__init__(intents=intents)
        self.settings, self.temporal, self.pool = settings, temporal, pool

    async def setup_hook(self) -> None:
        """After login, before the Gateway: find the Gateway, and register `/isolator`."""
        _, gateway_url, _ = await self.http.get_bot_gateway()
        DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway_url)
        application_id = self.settings.discord_application_id
        if application_id is None:
            log.warning("DISCORD_APPLICATION_ID is not set: the /isolator slash command is not registered")
            return
        try:
            await self.http.bulk_upsert_global_commands(application_id, [SLASH_COMMAND])
        except discord.HTTPException as error:
            log.warning("could not register the /isolator slash command: %s", error)

    async def on_message(self, message: discord.Message) -> None:
        assert self.user is not None
        if message.author.bot or message.webhook_id is not None or message.type not in _ANSWERED_TYPES:
            return
        where = await self._kind_of(message.channel)
        mentioned = any(user.id == self.user.id for user in message.mentions)
        addressed = ((where == "channel" and mentioned) or where == "dm"
                     or (where == "thread" and (mentioned or self._replies_to_bot(message))))
        if not addressed:
            return
        text = strip_bot_mentions(message.content, self.user.id)
        if not text.strip():  # a bare mention, or an attachment alone: nothing for the agent to do
            await message.reply("Write what the agent should do after the mention, or a command such as `/help`.")
            return
        admission = admit_discord(sender_of(message), self.settings)
        conversation_id: int | None = message.channel.id
        if where == "channel" and admission.refused is None:  # a refused sender gets one reply, and no thread
            conversation_id = await self._start_thread(message)
            if conversation_id is None:
                return
        try:
            await self._start(str(conversation_id), text, str(message.id), "message", admission)
        except UnusableText as error:
            await message.reply(f"Cannot read that message: {error}. Write it again as plain text.")

    async def on_raw_thread_update(self, payload: discord.RawThreadUpdateEvent) -> None:
        metadata = payload.data.get("thread_metadata") or {}
        if metadata.get("archived"):
            # The archive time tells one archiving from the next, after the thread was used again.
            await self._close(payload.thread_id, f"archived:{payload.thread_id}:{metadata.get('archive_timestamp', '')}")

    async def on_raw_thread_delete(self, payload: discord.RawThreadDeleteEvent) -> None:
        await self._close(payload.thread_id, f"deleted:{payload.thread_id}")

    async def _close(self, thread_id: int, message_key: str) -> None:
        # Only threads that are conversations: archiving is common, and most threads are not ours.
        known = await self.pool.fetchval(
            "SELECT EXISTS (SELECT 1 FROM conversations WHERE platform = $1 AND platform_conversation_id = $2)",
            PLATFORM, str(thread_id),
        )
        if known:
            await self._start(str(thread_id), "", message_key, "closed")

    async def _start(self, conversation_id: str, text: str, message_key: str,
                     kind: Literal["message", "closed"], admission: Admission | None = None) -> None:
        waited, delay = 0.0, 0.5
        while True:
            try:
                await start_message(self.settings, self.temporal, platform=PLATFORM, conversation_id=conversation_id,
                                    text=text, message_key=message_key, kind=kind, admission=admission)
                return
            except RPCError as error:
                if waited >= START_PATIENCE:
                    log.error("discord %s %s given up: Temporal refused it for %.0f s: %s",
                              kind, message_key, waited, error)
                    return
                log.warning("discord %s %s not started yet (%s); retrying in %.1f s", kind, message_key, error, delay)
                await asyncio.sleep(delay)
                waited, delay = waited + delay, min(delay * 2, 30.0)

    async def _start_thread(self, message: discord.Message) -> int | None:
        """The thread on a mention in a channel; one made before (a replayed event) is the same thread.

        None, after telling the channel why, when the bot may not start threads there.
        """
        assert self.user is not None
        try:
            await message.create_thread(name=thread_name(strip_bot_mentions(message.content, self.user.id)))
        except discord.Forbidden:
            await message.reply("I work in a thread of my own for each conversation, and may not start threads here: "
                                "give me the Create Public Threads and Send Messages in Threads permissions.")
            return None
        except discord.HTTPException as error:
            if error.code != _THREAD_EXISTS:
                raise
        return message.id  # a thread started from a message has the message's id

    async def _kind_of(self, channel: object) -> Literal["channel", "thread", "dm"] | None:
        if isinstance(channel, discord.PartialMessageable):  # not in the cache: ask Discord
            channel = await self.fetch_channel(channel.id)
        if isinstance(channel, discord.Thread):
            return "thread"
        if isinstance(channel, discord.DMChannel):
            return "dm"
        if isinstance(channel, discord.TextChannel):
            return "channel"
        return None  # voice and stage chats cannot hold threads

    def _replies_to_bot(self, message: discord.Message) -> bool:
        replied = message.reference.resolved if message.reference else None
        return isinstance(replied, discord.Message) and self.user is not None and replied.author.id == self.user.id


def sender_of(message: discord.Message) -> DiscordSender:
    """The author, their server and roles (a Member's, in a server; none in a direct message)."""
    roles = frozenset(str(role.id) for role in getattr(message.author, "roles", ()))
    return DiscordSender(str(message.author.id), str(message.guild.id) if message.guild else None, roles)


@asynccontextmanager
async def running_discord_listener(
    settings: Settings, temporal: Client, pool: asyncpg.Pool
) -> AsyncIterator[asyncio.Task[None]]:
    """The listener connected for the duration of the block; the task ends early if it cannot go on."""
    assert settings.discord_bot_token is not None
    use_api_url(settings)
    if (warning := unset_rule(PLATFORM, settings)) is not None:
        log.warning(warning)
    listener = DiscordListener(settings, temporal, pool)
    listening = asyncio.create_task(listener.start(settings.discord_bot_token.get_secret_value()))
    listening.add_done_callback(_report_end)
    try:
        yield listening
    finally:
        await listener.close()
        await asyncio.gather(listening, return_exceptions=True)


def _report_end(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and (error := task.exception()) is not None:
        log.error("the Discord listener stopped: %s", explained(error))


def explained(error: BaseException) -> str:
    """What to do about the listener's end, in the words of its configuration."""
    if isinstance(error, discord.LoginFailure):
        return "Discord rejected DISCORD_BOT_TOKEN; check the bot token (and DISCORD_API_URL)"
    if isinstance(error, discord.PrivilegedIntentsRequired):
        return "enable the Message Content intent for the bot in Discord's developer portal"
    return f"{type(error).__name__}: {error}"


async def run_discord_listener(settings: Settings) -> None:
    """`isolator discord`: listen until a signal stops it; raises what ended the listener otherwise."""
    assert settings.database_url is not None
    stop = asyncio.Event()
    stop_on_signals(stop)
    temporal = await connect(settings.temporal_address, settings.temporal_namespace)
    pool = await create_pool(settings.database_url)
    try:
        async with running_discord_listener(settings, temporal, pool) as listening:
            stopping = asyncio.create_task(stop.wait())
            await asyncio.wait({listening, stopping}, return_when=asyncio.FIRST_COMPLETED)
            stopping.cancel()
            if listening.done() and not listening.cancelled() and listening.exception() is not None:
                raise listening.exception()  # type: ignore[misc]
    finally:
        await pool.close()
