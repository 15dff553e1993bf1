"""`isolator api`: the API server, and (EAGER_START, the default) a worker of the shared queue in the
same process, so that message workflows start eagerly (docs/warm.md, "What runs where").

With Eager Workflow Start the server hands a new workflow's first task back in the start response to a
worker of the same client, instead of waiting for a poll: a message takes one round trip less. The
hosted worker is one more poller of the shared queue; the worker processes go on serving it and their
hosts' queues, on this machine or others, and several API processes each host their own.

The hosted worker takes the git work of a codebase only when this process runs on that codebase's host
(ISOLATOR_HOST is this machine's name); otherwise it answers "elsewhere" and the work goes to the host's
queue, as from any worker on another machine.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from typing import AsyncIterator

import asyncpg
import uvicorn
from temporalio.client import Client

from activities.database import create_pool
from api.app import create_app
from isolator.payloads import connect
from isolator.settings import Settings
from workers.serving import ApiServer, serve_until, stop_on_signals
from workers.worker import shared_worker

log = logging.getLogger(__name__)


def hosted_settings(settings: Settings) -> Settings:
    """The hosted worker's settings: this machine's own host, or one no codebase records, so that it never
    runs git in a checkout this process cannot see (the API's ISOLATOR_HOST names where codebases go)."""
    if settings.host == socket.gethostname():
        return settings
    return settings.model_copy(update={"host": f"api-process-of-{settings.host}"})


@contextlib.asynccontextmanager
async def hosted_worker(client: Client, pool: asyncpg.Pool, settings: Settings) -> AsyncIterator[None]:
    """The shared queue's worker (workflows and their local activities) in this process, with `client`:
    the one the API starts message workflows with."""
    if not settings.eager_start:
        yield
        return
    worker = shared_worker(client, pool, hosted_settings(settings))
    running = asyncio.create_task(worker.run())
    try:
        yield
    finally:
        await worker.shutdown()
        await asyncio.gather(running, return_exceptions=True)


async def run_api(settings: Settings, host: str, port: int) -> None:
    assert settings.database_url
    stop = asyncio.Event()
    stop_on_signals(stop)
    client = await connect(settings.temporal_address, settings.temporal_namespace)
    pool = await create_pool(settings.database_url)
    try:
        async with hosted_worker(client, pool, settings):
            app = create_app(settings, temporal=client, pool=pool)
            log.info("API on %s:%d%s", host, port, ", starting message workflows eagerly" if settings.eager_start else "")
            await serve_until(stop, ApiServer(uvicorn.Config(app, host=host, port=port)))
    finally:
        await pool.close()
