"""The overview's figures of the day (since midnight UTC), from what /metrics counts (docs/observability.md):
the runs and their cost by the very queries of api/metrics_state.py, the approvals waiting, the warm
worktrees claimed; and the messages as Temporal counts them, one MessageWorkflow each, whichever process
ran them (the messages counter is each worker's own)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import asyncpg
from temporalio.client import Client
from temporalio.service import RPCError

from activities.runs.sessions import today_utc
from api.metrics_state import RUN_ENDS, SPENT, WARM_CLAIMS_SINCE

_PENDING = "SELECT count(*) FROM approvals WHERE state = 'pending'"


@dataclass
class Today:
    messages: int | None  # None: Temporal could not be asked
    runs: int  # queued since midnight, ended or not
    failed: int
    cost_usd: float
    approvals_waiting: int
    warm_hits: int


async def today_figures(pool: asyncpg.Pool, client: Client, task_queue: str) -> Today:
    since = today_utc()
    async with pool.acquire() as connection:
        ends = await connection.fetch(RUN_ENDS, since)
        spent = await connection.fetch(SPENT, since)
        waiting = await connection.fetchval(_PENDING)
        warm_hits = await connection.fetchval(WARM_CLAIMS_SINCE, since)
    return Today(
        messages=await _messages_since(client, task_queue, since),
        runs=sum(row["runs"] for row in ends),
        failed=sum(row["runs"] for row in ends if row["end_"] in ("failed", "timed_out")),
        cost_usd=sum(row["cost"] for row in spent),
        approvals_waiting=waiting,
        warm_hits=warm_hits,
    )


async def _messages_since(client: Client, task_queue: str, since: datetime) -> int | None:
    queue = task_queue.replace("'", "")  # a setting, not input; quoted all the same
    query = f"WorkflowType = 'MessageWorkflow' AND TaskQueue = '{queue}' AND StartTime >= '{since.isoformat()}'"
    try:
        return (await client.count_workflows(query)).count
    except RPCError:
        return None
