"""An API's hosted worker (EAGER_START) runs message workflows only while its settings agree with the workers'
(activities/hosts/agreement.py): refused at the API's start when they differ, and stopped as soon as they
do (workers that start after the API, a worker restarted with other settings). The API then only starts
workflows, on the workers' queue; it says why in its log, once."""

from __future__ import annotations

import asyncio
import logging
import os
import socket

import asyncpg
from temporalio.worker import Worker

from activities.hosts.agreement import eager_refusal
from isolator.settings import Settings

log = logging.getLogger(__name__)

# How often a hosted worker's settings are compared with the workers' again.
GUARD_SECONDS = 2.0


async def eager_allowed(pool: asyncpg.Pool, settings: Settings) -> bool:
    try:
        refusal = await eager_refusal(pool, settings)
    except asyncpg.UndefinedTableError:  # not migrated yet: nothing is known of the workers (its guard looks again)
        return True
    if refusal is None:
        return True
    log.warning(refusal)
    return False


async def stop_when_settings_differ(pool: asyncpg.Pool, settings: Settings, worker: Worker) -> None:
    """Runs beside the hosted worker; shuts it down once the workers' settings are known to differ."""
    while True:
        await asyncio.sleep(GUARD_SECONDS)
        try:
            refusal = await eager_refusal(pool, settings)
        except (OSError, asyncpg.PostgresError) as error:  # PostgreSQL restarting: compared at the next tick
            log.debug("could not compare this API's settings with the workers': %s", error)
            continue
        if refusal is not None:
            log.warning(refusal)
            await pool.execute(
                """UPDATE service_processes SET runs_messages = false
                   WHERE kind = 'api' AND machine = $1 AND pid = $2 AND stopped_at IS NULL""",
                socket.gethostname(), os.getpid())
            await worker.shutdown()
            return
