"""A process's presence in `service_processes` while it runs (activities/hosts/presence.py): the row written
at its start, refreshed every PRESENCE_SECONDS, marked stopped when the block exits. A refresh that fails
(PostgreSQL restarting) is tried again at the next tick; the process goes on serving meanwhile."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import AsyncIterator

import asyncpg

from activities.hosts.presence import PRESENCE_SECONDS, Presence, record_alive, record_start, record_stop
from isolator.settings import Settings

log = logging.getLogger(__name__)


@contextlib.asynccontextmanager
async def present(pool: asyncpg.Pool, settings: Settings, kind: str,
                  runs_messages: bool) -> AsyncIterator[Presence | None]:
    try:
        presence = await record_start(pool, settings, kind, runs_messages)
    except asyncpg.UndefinedTableError:  # a database not migrated yet: serving matters more than being listed
        log.warning("this %s is not recorded as alive: the table service_processes is missing. Run `isolator "
                    "migrate`, then restart it", kind)
        yield None
        return
    refreshing = asyncio.create_task(_refresh(pool, presence))
    try:
        yield presence
    finally:
        refreshing.cancel()
        await asyncio.gather(refreshing, return_exceptions=True)
        try:
            await record_stop(pool, presence)
        except (OSError, asyncpg.PostgresError) as error:  # its row goes silent instead: the same, a little later
            log.warning("could not record this %s's stop: %s", kind, error)


async def _refresh(pool: asyncpg.Pool, presence: Presence) -> None:
    failing = False
    while True:
        await asyncio.sleep(PRESENCE_SECONDS)
        try:
            await record_alive(pool, presence)
        except (OSError, asyncpg.PostgresError, asyncio.TimeoutError) as error:
            if not failing:
                log.warning("could not record that this %s is alive: %s", presence.kind, error)
            failing = True
        else:
            failing = False
