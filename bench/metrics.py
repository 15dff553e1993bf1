"""What the metrics cost (docs/observability.md, "Metrics"):

- `GET /metrics` of the bench's `isolator api` process with 1,000 environments of one more codebase (and
  3,000 runs, 300 requests to a person) beside everything the other cases left: its queries, this
  process's counters and the Temporal SDK's text, over loopback HTTP. Target: p50 under 50 ms, as the
  dashboard's pages are held to their p50.
- the throughput of 50 conversations' reuse with metrics on (the worker's interceptor counting every
  workflow and activity, and /metrics scraped every second, 15 times Prometheus' default pace) against off
  (the workers built without it, nothing scraped). Target: at least x0.95.

The two services of the second case run in this process, each with its own API, workers, queues, host and
repository, on the stack's PostgreSQL and Temporal: the off one is built with the interceptor left out.
Windows go off, on, on, off, so that the machine's wandering speed falls on both.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from contextlib import AsyncExitStack
from typing import AsyncIterator, Iterator

from pathlib import Path

import asyncpg
import httpx
from temporalio.worker import Interceptor

from activities.database import create_pool
from api.app import create_app
from bench.figures import Figure, Latency, timed, verdict
from bench.messages import RAMP_SECONDS, WINDOW_SECONDS, _Load, _saturate
from bench.repos import make_repository
from bench.stack import Stack
from isolator.payloads import connect
from isolator.settings import load_settings
from workers import interceptors
from workers.worker import running_workers

SCRAPE_TARGET_MS = 50.0
SCRAPE_EVERY_SECONDS = 1.0
ORDER = ("off", "on", "on", "off")

_PLANT = """
WITH codebase AS (
  INSERT INTO codebases (name, canonical_path, default_branch, host) VALUES ($1, '/srv/' || $1, 'main',
         'bench-elsewhere') RETURNING id
), planted AS (
  INSERT INTO isolation_environments (codebase_id, workflow_type, workflow_id, working_path, branch_name, status,
                                      created_at, disk_bytes, archive_ref, archived_at, destroyed_at, metadata)
  SELECT codebase.id, 'thread', 'metrics-' || n, '/srv/worktrees/' || $1 || '/thread-' || n, 'thread-' || n,
         CASE WHEN n % 4 = 0 THEN 'active' WHEN n % 10 = 1 THEN 'hibernated' ELSE 'destroyed' END,
         now() - make_interval(days => n % 40), (n * 7919 % 500) * 1048576,
         CASE WHEN n % 4 <> 0 THEN 'refs/isolator/archive/' || n END, CASE WHEN n % 4 <> 0 THEN now() END,
         CASE WHEN n % 4 <> 0 AND n % 10 <> 1 THEN now() END,
         CASE WHEN n % 3 = 0 THEN '{"warm": true}'::jsonb ELSE '{}'::jsonb END
  FROM codebase, generate_series(1, $2) AS n
  RETURNING id
), runs AS (
  INSERT INTO agent_runs (id, environment_id, platform, conversation_id, message, status, queued_at, started_at,
                          finished_at, driver, cost_usd, input_tokens, output_tokens)
  SELECT gen_random_uuid(), planted.id, 'slack', 'C0METRICS:' || planted.id || ':' || k, 'bench',
         (ARRAY['done', 'done', 'done', 'failed', 'stopped', 'waiting'])[1 + (k + length(planted.id::text)) % 6],
         now() - interval '1 hour', now() - interval '59 minutes', now() - make_interval(secs => k * 7),
         (ARRAY['claude', 'codex'])[1 + k % 2], 0.05 * k, 1000 * k, 100 * k
  FROM planted, generate_series(1, 3) AS k
  RETURNING id, environment_id
)
INSERT INTO approvals (id, code, run_id, environment_id, platform, conversation_id, kind, summary, state, created_at,
                       answered_at)
SELECT gen_random_uuid(), 'm' || substr(md5(runs.id::text), 1, 12), runs.id, runs.environment_id, 'slack', 'C0METRICS',
       'tool', 'bench', CASE WHEN random() < 0.1 THEN 'pending' ELSE 'allowed' END, now() - interval '30 minutes',
       now() - interval '20 minutes'
FROM runs WHERE random() < 0.1
"""


async def scrape_with_environments(stack: Stack, environments: int, runs: int) -> list[Figure]:
    codebase = f"metrics-{uuid.uuid4().hex[:8]}"
    connection = await asyncpg.connect(stack.database_url)
    try:
        await connection.execute(_PLANT, codebase, environments)
        rows = await connection.fetchval("SELECT count(*) FROM isolation_environments")
    finally:
        await connection.close()

    async def scrape() -> None:
        response = await stack.api.get("/metrics")
        response.raise_for_status()

    try:
        await scrape()  # the first: connections, the schedule's look
        latency = Latency.of([await timed(scrape) for _ in range(runs)])
    finally:
        connection = await asyncpg.connect(stack.database_url)
        try:
            await connection.execute("DELETE FROM codebases WHERE name = $1", codebase)
        finally:
            await connection.close()
    return [Figure(f"GET /metrics, {environments:,} environments of one codebase ({rows:,} rows in all)",
                   str(latency), f"target p50 < {SCRAPE_TARGET_MS:.0f} ms", verdict(latency.p50 < SCRAPE_TARGET_MS),
                   {"latency": vars(latency), "environment_rows": rows})]


class _Uncounted(Interceptor):
    """The metrics interceptor's place, doing nothing: the workers as they would be without metrics."""


@contextlib.contextmanager
def _without_metrics() -> Iterator[None]:
    counting = interceptors.Metrics
    interceptors.Metrics = _Uncounted  # type: ignore[misc, assignment]
    try:
        yield
    finally:
        interceptors.Metrics = counting  # type: ignore[misc]


@contextlib.asynccontextmanager
async def in_process_service(stack: Stack, folder: Path) -> AsyncIterator[httpx.AsyncClient]:
    """The API and the workers in this process, with their repository registered."""
    run = uuid.uuid4().hex[:8]
    address = stack.temporal.service_client.config.target_host
    settings = load_settings(
        database_url=stack.database_url, temporal_address=address, data_dir=folder / "data",
        worktree_base_setting=folder / "worktrees", workspace_path_setting=folder / "workspace",
        host=f"bench-metrics-{run}", task_queue=f"bench-metrics-{run}", test_adapter=True,
        allowed_hosts="isolator.test", warm_worktrees=0, eager_start=False, max_worktrees_per_codebase=100000)
    async with AsyncExitStack() as cleanup:
        client = await connect(address)
        pool = await create_pool(stack.database_url)
        cleanup.push_async_callback(pool.close)
        app = create_app(settings, temporal=client, pool=pool)
        await cleanup.enter_async_context(running_workers(client, pool, settings))
        api = await cleanup.enter_async_context(httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://isolator.test", timeout=120))
        repository = make_repository(folder / f"{folder.name}-{run}", files=50, folders=1)
        (await api.post("/api/codebases", json={"path": str(repository)})).raise_for_status()
        yield api


async def _say(api: httpx.AsyncClient, conversation: str) -> None:
    response = await api.post("/test/message", params={"wait": "true"},
                              json={"conversationId": conversation, "message": "bench"})
    response.raise_for_status()


async def _scraping(api: httpx.AsyncClient) -> None:
    while True:
        (await api.get("/metrics")).raise_for_status()
        await asyncio.sleep(SCRAPE_EVERY_SECONDS)


async def throughput_cost(stack: Stack, concurrency: int, seconds: float) -> list[Figure]:
    async with AsyncExitStack() as cleanup:
        with _without_metrics():
            off = await cleanup.enter_async_context(in_process_service(stack, stack.trees / "metrics-off"))
        services = {"off": off,
                    "on": await cleanup.enter_async_context(in_process_service(stack, stack.trees / "metrics-on"))}
        conversations = [f"metrics-{index}" for index in range(concurrency)]
        for api in services.values():
            for conversation in conversations:
                await _say(api, conversation)  # its worktree made: what follows is reuse
        counted_per_window = WINDOW_SECONDS - RAMP_SECONDS
        rounds = max(1, round(seconds / (2 * counted_per_window)))
        window = seconds / (2 * rounds) + RAMP_SECONDS
        loads = {side: _Load() for side in services}
        for side in ("off", "on"):  # the warm-up of each, not counted
            await _saturate(lambda index: _say(services[side], conversations[index]), concurrency, window, RAMP_SECONDS)
        for _ in range(rounds):
            for side in ORDER:
                api = services[side]
                scraper = asyncio.create_task(_scraping(api)) if side == "on" else None
                try:
                    loads[side].add(*await _saturate(lambda index: _say(api, conversations[index]), concurrency,
                                                     window, RAMP_SECONDS), window - RAMP_SECONDS)
                finally:
                    if scraper is not None:
                        scraper.cancel()
                        await asyncio.gather(scraper, return_exceptions=True)
    ratio = loads["on"].rate / loads["off"].rate
    return [
        Figure(f"throughput with metrics on, reuse, {concurrency} conversations, scraped every "
               f"{SCRAPE_EVERY_SECONDS:g} s", f"{loads['on'].rate:.1f} msg/s", f"metrics off: {loads['off'].rate:.1f}/s",
               verdict(ratio >= 0.95), {"rate": round(loads["on"].rate, 1), "baseline_rate": round(loads["off"].rate, 1),
                                        "ratio": round(ratio, 3)}),
        Figure("  ratio to metrics off", f"x{ratio:.2f} (target >= 0.95)"),
    ]
