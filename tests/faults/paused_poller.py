"""Telegram's poller as a process of its own (in the service it runs in the API process), plus a pause
before an offset's commit.

Run as `python -m tests.faults.paused_poller`. With ISOLATOR_FAULT_POLLER_PAUSE=before-commit, the first
commit of an offset stops for good after touching the file ISOLATOR_FAULT_MARKER: the update's workflow
has started and its offset is not committed, and the test kills the process there. Without the variable
it is the poller as it ships: the pause lives here, never in the production path.
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path

import asyncpg

from activities.database import create_pool
from isolator.payloads import connect
from isolator.settings import load_settings
from api.platforms.telegram import poller as telegram_poller


def pause_before_commit(marker: Path) -> None:
    async def stopped(pool: asyncpg.Pool, bot_id: int, offset: int) -> None:
        marker.write_text(f"before-commit {offset}\n")
        await asyncio.Event().wait()  # until the test kills this process

    telegram_poller.write_offset = stopped  # type: ignore[assignment]


async def run() -> None:
    settings = load_settings()
    assert settings.database_url is not None and settings.telegram_polls, "set DATABASE_URL and TELEGRAM_MODE=polling"
    client = await connect(settings.temporal_address, settings.temporal_namespace)
    pool = await create_pool(settings.database_url)
    try:
        await telegram_poller.TelegramPoller(settings, client, pool).run()
    finally:
        await pool.close()


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    point = os.environ.get("ISOLATOR_FAULT_POLLER_PAUSE")
    if point:
        if point != "before-commit" or "ISOLATOR_FAULT_MARKER" not in os.environ:
            raise SystemExit("ISOLATOR_FAULT_POLLER_PAUSE is before-commit, with ISOLATOR_FAULT_MARKER set")
        pause_before_commit(Path(os.environ["ISOLATOR_FAULT_MARKER"]))
    asyncio.run(run())


if __name__ == "__main__":
    main()
