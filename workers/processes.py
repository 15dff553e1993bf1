"""`isolator worker`: a production worker process."""

from __future__ import annotations

import asyncio
import logging

from temporalio.client import Client

from activities.database import create_pool
from isolator.settings import Settings
from workers.serving import serve_until, stop_on_signals
from workers.worker import running_workers

log = logging.getLogger(__name__)


async def run_worker(settings: Settings) -> None:
    assert settings.database_url
    stop = asyncio.Event()
    stop_on_signals(stop)
    client = await Client.connect(settings.temporal_address, namespace=settings.temporal_namespace)
    pool = await create_pool(settings.database_url)
    try:
        async with running_workers(client, pool, settings):
            log.info("worker on %s and %s", settings.task_queue, settings.host_task_queue())
            await serve_until(stop, None)
    finally:
        await pool.close()
