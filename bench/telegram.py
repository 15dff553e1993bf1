"""Telegram: from an update available to its workflow started, by polling against by webhook.

An `isolator api` and an `isolator worker` of their own (queues of their own, so the stack's other cases
see nothing of them), with TELEGRAM_MODE=polling and TELEGRAM_WEBHOOK_SECRET: the same process polls the
fake Bot API of the tests and serves `POST /webhooks/telegram`, so both ways share everything but
their way in. Each sample is a `/help` in a private chat, sent one at a time, alternately by each way:
- by webhook: from the POST sent (signed with the secret, as Telegram sends it) to the workflow started;
- by polling: once a `getUpdates` is waiting, from the update put into the fake to the workflow started.
The workflow's start is its start time in Temporal, the same clock for both; the next sample waits for
the previous one's workflow to finish, and (by polling) for the poller to ask again.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import time
import uuid
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any, AsyncIterator, Awaitable, Callable

import httpx
from temporalio.service import RPCError, RPCStatusCode

from bench.figures import Figure, Latency, verdict
from bench.stack import ISOLATOR, Stack, _ready, _spawn, _stop, free_port
from isolator.contracts.message import message_workflow_id
from tests.fakes.telegram_api import BOT_TOKEN, FakeTelegram
from tests.platforms.telegram import SECRET_HEADER, USER, WEBHOOK_SECRET, message

TARGET_MS = 50.0  # by polling, at most this much above the webhook, p50
_update_ids = itertools.count(uuid.uuid4().int % 10**9 * 1000)


async def polling_against_webhook(stack: Stack, runs: int) -> list[Figure]:
    async with AsyncExitStack() as cleanup:
        fake = FakeTelegram()
        await fake.start()
        cleanup.push_async_callback(fake.stop)
        api = await cleanup.enter_async_context(_telegram_processes(stack, fake))
        await _until(lambda: fake.polls_waiting > 0)
        await _sample(stack, lambda: _by_webhook(api))  # first-use costs, on either side
        await _sample(stack, lambda: _by_polling(fake))
        webhook, polling = [], []
        for _ in range(runs):
            webhook.append(await _sample(stack, lambda: _by_webhook(api)))
            polling.append(await _sample(stack, lambda: _by_polling(fake)))
    by_webhook, by_polling = Latency.of(webhook), Latency.of(polling)
    above = round(by_polling.p50 - by_webhook.p50, 1)
    return [Figure("Telegram update to workflow started, by polling, above the webhook (p50)",
                   f"{above:+.1f} ms (polling {by_polling}; webhook {by_webhook})", "the webhook, same process",
                   verdict(above <= TARGET_MS) + f" (target <= +{TARGET_MS:g} ms)",
                   {"polling": vars(by_polling), "webhook": vars(by_webhook), "above_ms": above})]


@asynccontextmanager
async def _telegram_processes(stack: Stack, fake: FakeTelegram) -> AsyncIterator[httpx.AsyncClient]:
    """The API and worker polling `fake`; a client of the API."""
    port = free_port()
    env = {**{key: value for key, value in os.environ.items() if not key.startswith(("GITHUB_", "SLACK_", "TELEGRAM_"))},
           "DATABASE_URL": stack.database_url, "TEMPORAL_ADDRESS": stack.temporal.service_client.config.target_host,
           "ISOLATOR_DATA_DIR": str(stack.work / "telegram-data"), "ISOLATOR_HOST": stack.host,
           "ISOLATOR_TASK_QUEUE": f"{stack.task_queue}-telegram", "WARM_WORKTREES": "0",
           "WORKTREE_BASE": str(stack.trees / "telegram-worktrees"),
           "WORKSPACE_PATH": str(stack.trees / "telegram-workspace"),
           "TELEGRAM_MODE": "polling", "TELEGRAM_BOT_TOKEN": BOT_TOKEN, "TELEGRAM_API_URL": fake.api_url,
           "TELEGRAM_WEBHOOK_SECRET": WEBHOOK_SECRET, "TELEGRAM_ALLOWED_USERS": str(USER["id"])}
    processes = {
        "telegram-worker": _spawn("telegram-worker", [str(ISOLATOR), "worker"], env, stack.work),
        "telegram-api": _spawn("telegram-api", [str(ISOLATOR), "api", "--host", "127.0.0.1", "--port", str(port)],
                               env, stack.work),
    }
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=120) as api:
            await _ready(api, processes, stack.work)
            yield api
    finally:
        _stop(processes)


def _update() -> dict[str, Any]:
    return {"update_id": next(_update_ids), "message": message("/help")}


async def _by_webhook(api: httpx.AsyncClient) -> tuple[str, float]:
    update = _update()
    body = json.dumps(update).encode()
    sent = time.time()
    response = await api.post("/webhooks/telegram", content=body,
                              headers={SECRET_HEADER: WEBHOOK_SECRET, "content-type": "application/json"})
    if response.status_code != 200:
        raise RuntimeError(f"/webhooks/telegram answered {response.status_code}: {response.text}")
    return message_workflow_id("telegram", str(update["update_id"])), sent


async def _by_polling(fake: FakeTelegram) -> tuple[str, float]:
    await _until(lambda: fake.polls_waiting > 0)  # the poller asked again after the last one
    update = _update()
    available = time.time()
    fake.push(update)
    return message_workflow_id("telegram", str(update["update_id"])), available


async def _sample(stack: Stack, send: Callable[[], Awaitable[tuple[str, float]]]) -> float:
    """Milliseconds from the update available to its workflow's start (Temporal's clock, this machine's)."""
    workflow_id, available = await send()
    handle = stack.temporal.get_workflow_handle(workflow_id)
    for _ in range(1200):  # by polling, its workflow may not be started yet
        try:
            started = (await handle.describe()).start_time
            break
        except RPCError as error:
            if error.status != RPCStatusCode.NOT_FOUND:
                raise
            await asyncio.sleep(0.05)
    else:
        raise RuntimeError(f"bench: {workflow_id} was not started within 60 s")
    await handle.result()
    return (started.timestamp() - available) * 1000


async def _until(holds: Callable[[], bool], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not holds():
        if time.monotonic() > deadline:
            raise RuntimeError("bench: the Telegram poller did not ask for updates")
        await asyncio.sleep(0.002)
