"""Telegram by polling (TELEGRAM_MODE=polling): the API process asks Telegram for its updates with
`getUpdates` instead of being sent them, so nothing has to reach this machine (docs/platforms.md).

At start the bot's webhook is deleted (its pending updates kept): Telegram answers `getUpdates` with 409
while one is set. Then long polling: each request waits up to POLL_SECONDS for updates. Each update goes
through the webhook's own code (`api.platforms.telegram.webhook.handle_update`), and only once its workflow has
started is the offset (the next update_id to ask for) committed to PostgreSQL. A process killed in
between asks for the same update again after its restart: its workflow, named by the update_id, starts
nothing twice, and a press is taken once by its callback query's id.

Telegram serves one `getUpdates` at a time per bot: a second poller (another API process with the same
token) ends the first one's request with 409. Whoever gets a 409 waits CONFLICT_SECONDS and asks again,
and says so once in its life (the two go on ending each other's requests for as long as both run); an
update both happened to fetch is still started once, by its update_id.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import AsyncIterator

import asyncpg
from telegram import Bot, Update
from telegram.error import Conflict, TelegramError
from temporalio.client import Client
from temporalio.service import RPCError

from api.platforms.telegram.webhook import MalformedUpdate, handle_update, parse_update
from isolator.settings import Settings
from isolator.telegram_here import doing

log = logging.getLogger(__name__)

POLL_SECONDS = 30  # how long Telegram holds a getUpdates that finds nothing
CONFLICT_SECONDS = 5.0  # the wait after a 409: another poller has the bot for now
RETRY_SECONDS = (1.0, 60.0)  # the first and the longest wait after Telegram or Temporal could not be reached
ALLOWED_UPDATES = ["message", "callback_query"]  # what handle_update reads; the approval buttons need the second


class TelegramPoller:
    def __init__(self, settings: Settings, client: Client, pool: asyncpg.Pool) -> None:
        assert settings.telegram_bot_token is not None, "polls only with TELEGRAM_BOT_TOKEN"
        self.settings, self.client, self.pool = settings, client, pool
        self._token = settings.telegram_bot_token.get_secret_value()
        self._conflict_told = False

    async def run(self) -> None:
        """Poll until cancelled. Telegram out of reach is waited out, never the end of the poller."""
        # httpx logs each request's URL at INFO, and a Bot API URL holds the bot's token: every poll would log it.
        logging.getLogger("httpx").setLevel(max(logging.WARNING, logging.getLogger("httpx").getEffectiveLevel()))
        wait = RETRY_SECONDS[0]
        while True:
            try:
                async with Bot(self._token, base_url=self.settings.telegram_api_url) as bot:
                    await bot.delete_webhook(drop_pending_updates=False)
                    log.info("telegram: polling for updates (its webhook is deleted)")
                    wait = RETRY_SECONDS[0]
                    await self._poll(bot)
            except (TelegramError, asyncpg.PostgresError, OSError) as error:  # Telegram or PostgreSQL out of reach
                log.warning("telegram polling paused %.0f s: %s", wait, self._readable(error))
                await asyncio.sleep(wait)
                wait = min(wait * 2, RETRY_SECONDS[1])

    async def _poll(self, bot: Bot) -> None:
        offset = await read_offset(self.pool, bot.id)
        while True:
            try:
                updates = await bot.get_updates(offset=offset, timeout=POLL_SECONDS, allowed_updates=ALLOWED_UPDATES)
            except Conflict as error:
                if not self._conflict_told:
                    log.warning("telegram: another poller or a webhook has this bot (%s); asking again every "
                                "%.1f s, said once", self._readable(error), CONFLICT_SECONDS)
                    self._conflict_told = True
                await asyncio.sleep(CONFLICT_SECONDS)
                continue
            for update in updates:
                await self._handle(update)
                offset = update.update_id + 1
                await write_offset(self.pool, bot.id, offset)

    async def _handle(self, update: Update) -> None:
        """Start the update's workflow, waiting for Temporal as long as it takes: the offset stays put meanwhile."""
        try:
            parsed = parse_update(update.to_dict())  # the webhook's checks of the fields read later
        except MalformedUpdate as error:
            log.warning("telegram update %s skipped: %s", update.update_id, error)
            return
        wait = RETRY_SECONDS[0]
        while True:
            try:
                handled = await handle_update(parsed, self.settings, self.client, self.pool)
            except RPCError as error:
                log.warning("telegram update %s not started, retried in %.0f s: %s", update.update_id, wait, error)
                await asyncio.sleep(wait)
                wait = min(wait * 2, RETRY_SECONDS[1])
                continue
            if handled.status >= 300:
                log.warning("telegram update %s refused: %s", update.update_id, handled.body.get("detail"))
            return

    def _readable(self, error: Exception) -> str:
        return f"{type(error).__name__}: {error}".replace(self._token, "<TELEGRAM_BOT_TOKEN>")


async def read_offset(pool: asyncpg.Pool, bot_id: int) -> int | None:
    """The next update_id to ask for; None before the first update: Telegram then starts at the oldest it holds."""
    return await pool.fetchval("SELECT next_offset FROM telegram_offsets WHERE bot_id = $1", bot_id)


async def write_offset(pool: asyncpg.Pool, bot_id: int, offset: int) -> None:
    """Overwritten, never kept at the highest: Telegram starts update_ids again at random after a week
    without updates, and an offset below what it has confirmed only asks for what is left."""
    await pool.execute(
        "INSERT INTO telegram_offsets (bot_id, next_offset) VALUES ($1, $2) "
        "ON CONFLICT (bot_id) DO UPDATE SET next_offset = $2, updated_at = now()",
        bot_id, offset,
    )


@contextlib.asynccontextmanager
async def polling_telegram(settings: Settings, client: Client, pool: asyncpg.Pool) -> AsyncIterator[None]:
    """The poller, for the duration of the block, when settings say to poll; nothing otherwise."""
    if not settings.telegram_polls:
        yield
        return
    running = asyncio.create_task(TelegramPoller(settings, client, pool).run())
    running.add_done_callback(_report_end)
    try:
        with doing("polling"):  # the doctor, in this process, leaves the webhook to the poller
            yield
    finally:
        running.cancel()
        await asyncio.gather(running, return_exceptions=True)


def _report_end(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and (error := task.exception()) is not None:
        log.error("the Telegram poller stopped: %s: %s", type(error).__name__, error)
