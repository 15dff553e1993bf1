"""`isolator worker` and `isolator api`: the production processes. Each stops on SIGINT, SIGTERM or
SIGHUP once it has finished what it was doing, and exits with code 0 (workers/exiting.py)."""

from __future__ import annotations

import asyncio
import logging
from typing import Sequence

from temporalio.api.enums.v1 import IndexedValueType
from temporalio.api.operatorservice.v1 import (
    AddSearchAttributesRequest,
    ListSearchAttributesRequest,
)
from temporalio.client import Client
from temporalio.worker import Interceptor

from activities.database import create_pool
from isolator import temporal_metrics
from isolator.contracts import search_attributes
from isolator.payloads import connect
from isolator.settings import Settings
from workers.presence import present
from workers.schedule import ensure_cleanup_schedule
from workers.metrics_server import serving_metrics
from workers.serving import serve_until, stop_on_signals
from workers.worker import running_workers

log = logging.getLogger(__name__)


async def run_worker(settings: Settings, interceptors: Sequence[Interceptor] = ()) -> None:
    """`interceptors`: added to the production ones (the fault tests add their pause)."""
    assert settings.database_url
    stop = asyncio.Event()
    stop_on_signals(stop)
    if settings.metrics_port is not None:
        temporal_metrics.install()  # before the first client: its runtime exports Temporal's metrics
    client = await connect(settings.temporal_address, settings.temporal_namespace)
    await ensure_search_attributes(client, settings.temporal_namespace)
    pool = await create_pool(settings.database_url)
    try:
        # Its row outlives the workers' shutdown: a host is alive while a worker of it finishes its runs.
        async with present(pool, settings, "worker", runs_messages=True), \
                running_workers(client, pool, settings, interceptors):
            await ensure_cleanup_schedule(client, settings)
            log.info("worker on %s and %s", settings.task_queue, settings.host_task_queue())
            async with serving_metrics(settings):
                await serve_until(stop, None)
    finally:
        await pool.close()


async def ensure_search_attributes(client: Client, namespace: str) -> None:
    """Register the project's search attributes on a production server; the dev server gets them as flags."""
    known = await client.operator_service.list_search_attributes(ListSearchAttributesRequest(namespace=namespace))
    missing = {key.name: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD
               for key in search_attributes.ALL if key.name not in known.custom_attributes}
    if missing:
        await client.operator_service.add_search_attributes(
            AddSearchAttributesRequest(namespace=namespace, search_attributes=missing)
        )
        log.info("registered search attributes %s", ", ".join(sorted(missing)))
