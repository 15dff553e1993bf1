"""`isolator api`: the API server, and (EAGER_START, the default) a worker of the shared queue in the
same process, so that message workflows start eagerly (docs/warm.md, "What runs where").

With Eager Workflow Start the server hands a new workflow's first task back in the start response to a
worker of the same client, instead of waiting for a poll: a message takes one round trip less. The
hosted worker is one more poller of the shared queue; the worker processes go on serving it and their
hosts' queues, on this machine or others, and several API processes each host their own.

It is hosted only when this process runs on the machine its ISOLATOR_HOST names (the default host
name): then its local steps (a stat, a `git worktree add`) run here, as in the host's worker. An API on
a machine without the checkouts (docker-compose.yml's `api` container) hosts none: each of its messages
would send every look at the disk to the host's queue, which costs more than the round trip saved. Nor
does an API whose AGENT*, SANDBOX*, approvals, RESULTS* or AUTOFIX* differ from the live workers': refused
at its start, or stopped once the workers say so (workers/eager_guard.py), it only starts workflows on
their queue, so that no message is answered otherwise than the workers would.

With TELEGRAM_MODE=polling it also asks Telegram for the bot's updates (api/platforms/telegram/poller.py), as
the webhook's route would have been sent them here; in webhook mode with PUBLIC_URL it sets the bot's
webhook to that route (api/platforms/telegram/webhook_setup.py). With SLACK_APP_TOKEN it holds Slack's
Socket Mode connection (api/platforms/slack/socket.py), its envelopes started with this client.
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
from temporalio.worker import Worker

from activities.chat.platforms.github_app.credentials import banner_line
from activities.database import create_pool
from api.app import SHUTDOWN_GRACE_SECONDS, create_app
from isolator import temporal_metrics
from isolator.payloads import connect
from isolator.settings import Settings
from workers.eager_guard import eager_allowed, stop_when_settings_differ
from workers.presence import present
from workers.serving import ApiServer, serve_until, stop_on_signals
from api.platforms.slack.socket import slack_socket
from api.platforms.telegram.webhook_setup import telegram_updates
from workers.worker import shared_worker

log = logging.getLogger(__name__)


@contextlib.asynccontextmanager
async def hosted_worker(client: Client, pool: asyncpg.Pool, settings: Settings) -> AsyncIterator[Worker | None]:
    """The shared queue's worker (workflows and their local activities) in this process, with `client`:
    the one the API starts message workflows with; None when EAGER_START is off or this is not the host."""
    if not settings.eager_start or settings.host != socket.gethostname():
        if settings.eager_start:
            log.info("EAGER_START: this machine (%s) is not ISOLATOR_HOST (%s): messages start on the workers",
                     socket.gethostname(), settings.host)
        yield None
        return
    if not await eager_allowed(pool, settings):  # its settings differ from the workers': not their messages
        yield None
        return
    worker = shared_worker(client, pool, settings)
    running = asyncio.create_task(worker.run())
    guarding = asyncio.create_task(stop_when_settings_differ(pool, settings, worker))
    try:
        yield worker
    finally:
        guarding.cancel()
        if not running.done():
            await worker.shutdown()
        await asyncio.gather(running, guarding, return_exceptions=True)


async def run_api(settings: Settings, host: str, port: int) -> None:
    assert settings.database_url
    stop = asyncio.Event()
    stop_on_signals(stop)
    temporal_metrics.install()  # before the first client: /metrics includes the Temporal SDK's
    client = await connect(settings.temporal_address, settings.temporal_namespace)
    pool = await create_pool(settings.database_url)
    try:
        async with hosted_worker(client, pool, settings) as worker, telegram_updates(settings, client, pool), \
                slack_socket(settings, client, pool), present(pool, settings, "api", runs_messages=worker is not None):
            app = create_app(settings, temporal=client, pool=pool)
            log.info("API on %s:%d%s", host, port, ", starting message workflows eagerly" if worker else "")
            if settings.api_token is None:
                log.warning("API_TOKEN is unset: listening on %s only, for this machine's own clients", host)
            if github := banner_line(settings):
                log.info("GitHub: acting %s", github)
            # A dashboard page's event stream stays open while its run goes on: the shutdown ends it after this.
            # log_config=None: its lines go through the process's own handler (LOG_FORMAT), not uvicorn's.
            config = uvicorn.Config(app, host=host, port=port, timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS,
                                    log_config=None)
            await serve_until(stop, ApiServer(config))
    finally:
        await pool.close()
