"""What PostgreSQL records, as Prometheus metrics read at scrape time (docs/observability.md): runs by agent
and end, their duration and queue wait, cost and tokens by codebase and agent, approvals, worktrees by
state, disk, archives, warm pools. Counters are totals of rows, so they survive restarts and every API
process answers the same; the rows' own retention (a codebase deleted takes its rows) may lower them,
which Prometheus' rate() takes as a counter reset.

A few aggregate queries on indexed tables, one connection: a scrape with a thousand environments takes a
few milliseconds (bench/metrics.py)."""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Iterable, Sequence

import asyncpg
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
RUN_BUCKETS = (1, 5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600)
WAIT_BUCKETS = (0.1, 0.5, 1, 5, 15, 30, 60, 300, 900, 3600)
ANSWER_BUCKETS = (10, 30, 60, 300, 900, 1800, 3600, 7200, 14400, 43200, 86400)

# A run that ended waiting on its budget's question ended "over budget"; the others end as their status
# (queued and running ones are not ended: a gauge of their own).
RUN_ENDS = """
SELECT coalesce(r.driver, 'command') AS agent,
       CASE WHEN r.status = 'waiting' AND EXISTS (SELECT 1 FROM approvals a WHERE a.run_id = r.id
                                                   AND a.kind IN ('budget', 'daily_budget'))
            THEN 'over_budget' ELSE r.status END AS end_, count(*) AS runs
FROM agent_runs r WHERE r.queued_at >= $1 GROUP BY 1, 2"""

SPENT = """
SELECT c.name AS codebase, coalesce(r.driver, 'command') AS agent, coalesce(sum(r.cost_usd), 0)::float8 AS cost,
       coalesce(sum(r.input_tokens), 0) AS input, coalesce(sum(r.output_tokens), 0) AS output,
       coalesce(sum(r.cache_read_tokens), 0) AS cache_read, coalesce(sum(r.cache_write_tokens), 0) AS cache_write
FROM agent_runs r JOIN isolation_environments e ON e.id = r.environment_id JOIN codebases c ON c.id = e.codebase_id
WHERE r.started_at >= $1 GROUP BY 1, 2"""

# Creates that claimed a warm worktree, as their environments record it.
WARM_CLAIMS_SINCE = "SELECT count(*) FROM isolation_environments WHERE metadata->>'warm' = 'true' AND created_at >= $1"
_APPROVALS = "SELECT kind, state, count(*) AS n FROM approvals GROUP BY 1, 2"
_OLDEST_PENDING = "SELECT extract(epoch FROM now() - min(created_at))::float8 FROM approvals WHERE state = 'pending'"

_WORKTREES = """
SELECT c.name AS codebase, e.status, count(*) AS n,
       coalesce(sum(e.disk_bytes) FILTER (WHERE e.status = 'active'), 0) AS disk_bytes,
       count(*) FILTER (WHERE e.archive_ref IS NOT NULL AND e.archive_pruned_at IS NULL
                          AND e.restored_as IS NULL) AS archives,
       count(*) FILTER (WHERE e.metadata->>'warm' = 'true') AS warm_claims
FROM isolation_environments e JOIN codebases c ON c.id = e.codebase_id GROUP BY 1, 2"""

_WARM = """
SELECT c.name AS codebase, coalesce(c.warm_worktrees, $1) AS size, w.state, count(w.id) AS n,
       coalesce(sum(w.disk_bytes), 0) AS disk_bytes
FROM codebases c LEFT JOIN warm_worktrees w ON w.codebase_id = c.id GROUP BY 1, 2, 3"""

_FIXING_STOPPED = "SELECT count(*) FROM pull_requests WHERE fixing_stopped IS NOT NULL"


def histogram_query(source: str, buckets: Sequence[float], label: str) -> str:
    """Per `label`, how many of `source`'s rows fall in each bucket and the sum of their `seconds`: one
    `width_bucket` per row (on the negated bounds, so that a value equal to a bound falls in that bound's
    bucket, as Prometheus' `le` has it). The buckets are this module's constants, never input."""
    negated = ", ".join(repr(-float(bound)) for bound in reversed(buckets))
    return (f"SELECT {label} AS label, {len(buckets)} - width_bucket(-seconds, ARRAY[{negated}]::float8[]) AS bucket, "
            f"count(*) AS n, sum(seconds) AS total FROM ({source}) AS rows GROUP BY 1, 2")


_RUN_SECONDS = histogram_query(
    "SELECT coalesce(driver, 'command') AS agent, date_part('epoch', finished_at - started_at) AS seconds "
    "FROM agent_runs WHERE finished_at IS NOT NULL AND started_at IS NOT NULL", RUN_BUCKETS, "agent")
_WAIT_SECONDS = histogram_query(
    "SELECT coalesce(driver, 'command') AS agent, date_part('epoch', started_at - queued_at) AS seconds "
    "FROM agent_runs WHERE started_at IS NOT NULL", WAIT_BUCKETS, "agent")
_ANSWER_SECONDS = histogram_query(
    "SELECT kind, date_part('epoch', answered_at - created_at) AS seconds FROM approvals "
    "WHERE answered_at IS NOT NULL", ANSWER_BUCKETS, "kind")


@dataclass
class StateSettings:
    warm_worktrees: int  # WARM_WORKTREES: a codebase's pool size unless it sets its own
    disk_budget_bytes: int | None  # DISK_BUDGET_GB, per codebase


async def state_metrics(pool: asyncpg.Pool, settings: StateSettings) -> list[Metric]:
    # Two connections, each half of the queries: PostgreSQL answers them side by side.
    (ends, spent, approvals, oldest, stopped), (worktrees, warm, *histograms) = await asyncio.gather(
        _fetch(pool, [(RUN_ENDS, EPOCH), (SPENT, EPOCH), (_APPROVALS,), (_OLDEST_PENDING,), (_FIXING_STOPPED,)]),
        _fetch(pool, [(_WORKTREES,), (_WARM, settings.warm_worktrees), (_RUN_SECONDS,), (_WAIT_SECONDS,),
                      (_ANSWER_SECONDS,)]))
    oldest, stopped = oldest[0][0], stopped[0][0]
    return [
        *_runs(ends, spent),
        *_approvals(approvals, oldest),
        *_worktrees(worktrees, warm, settings),
        _gauge("isolator_pull_requests_fixing_stopped", "Pull requests the loop stopped fixing (until a person's "
               "push or a green head)", [], [((), stopped)]),
        _histogram("isolator_agent_run_duration_seconds", "Agent runs' time from start to end", "agent",
                   RUN_BUCKETS, histograms[0]),
        _histogram("isolator_agent_run_queue_wait_seconds", "Agent runs' wait from queued to started", "agent",
                   WAIT_BUCKETS, histograms[1]),
        _histogram("isolator_approval_answer_seconds", "Time from a request to a person to its answer", "kind",
                   ANSWER_BUCKETS, histograms[2]),
    ]


async def _fetch(pool: asyncpg.Pool, queries: list[tuple[object, ...]]) -> list[list[asyncpg.Record]]:
    async with pool.acquire() as connection:
        return [await connection.fetch(query, *arguments) for query, *arguments in queries]


def _runs(ends: list[asyncpg.Record], spent: list[asyncpg.Record]) -> list[Metric]:
    tokens = [((row["codebase"], row["agent"], kind), row[kind])
              for row in spent for kind in ("input", "output", "cache_read", "cache_write")]
    going = {"queued": 0, "running": 0}
    for row in ends:
        if row["end_"] in going:
            going[row["end_"]] += row["runs"]
    return [
        _counter("isolator_agent_runs", "Agent runs that ended, by agent and end (done, failed, timed_out, stopped, "
                 "interrupted, dropped, waiting, over_budget)", ["agent", "end"],
                 [((row["agent"], row["end_"]), row["runs"]) for row in ends if row["end_"] not in going]),
        _gauge("isolator_agent_runs_in_progress", "Agent runs queued or running now", ["state"], going.items()),
        _counter("isolator_agent_cost_usd", "What agent runs cost, in US dollars, by codebase and agent",
                 ["codebase", "agent"], [((row["codebase"], row["agent"]), row["cost"]) for row in spent]),
        _counter("isolator_agent_tokens", "Tokens agent runs used, by codebase, agent and kind (input, output, "
                 "cache_read, cache_write)", ["codebase", "agent", "kind"], tokens),
    ]


def _approvals(rows: list[asyncpg.Record], oldest: float | None) -> list[Metric]:
    asked: dict[str, int] = {}
    for row in rows:
        asked[row["kind"]] = asked.get(row["kind"], 0) + row["n"]
    return [
        _counter("isolator_approvals_asked", "Requests runs made of a person, by kind (tool, question, plan, budget, "
                 "daily_budget)", ["kind"], [((kind,), count) for kind, count in asked.items()]),
        _counter("isolator_approvals_answered", "Requests that ended, by kind and answer (allowed, denied, answered, "
                 "timed_out, stopped)", ["kind", "answer"],
                 [((row["kind"], row["state"]), row["n"]) for row in rows if row["state"] != "pending"]),
        _gauge("isolator_approvals_pending", "Requests waiting for a person now, by kind", ["kind"],
               [((row["kind"],), row["n"]) for row in rows if row["state"] == "pending"]),
        _gauge("isolator_approvals_oldest_pending_seconds", "How long the oldest waiting request has waited (0: none)",
               [], [((), oldest or 0.0)]),
    ]


def _worktrees(rows: list[asyncpg.Record], warm: list[asyncpg.Record], settings: StateSettings) -> list[Metric]:
    disk: dict[str, int] = {}
    archives: dict[str, int] = {}
    claims: dict[str, int] = {}
    for row in rows:
        disk[row["codebase"]] = disk.get(row["codebase"], 0) + row["disk_bytes"]
        archives[row["codebase"]] = archives.get(row["codebase"], 0) + row["archives"]
        claims[row["codebase"]] = claims.get(row["codebase"], 0) + row["warm_claims"]
    sizes = {row["codebase"]: row["size"] for row in warm}
    for row in warm:
        disk[row["codebase"]] = disk.get(row["codebase"], 0) + row["disk_bytes"]
    families = [
        _gauge("isolator_worktrees", "Environments by codebase and state (active, hibernated, destroyed)",
               ["codebase", "state"], [((row["codebase"], row["status"]), row["n"]) for row in rows]),
        _gauge("isolator_worktree_disk_bytes", "Disk the codebase's worktrees use, as the scheduled cleanup last "
               "measured them (warm ones included, as the disk budget counts them)", ["codebase"], disk.items()),
        _gauge("isolator_archives_kept", "Removed worktrees whose archive can still be restored, by codebase",
               ["codebase"], archives.items()),
        _gauge("isolator_warm_pool_size", "Warm worktrees each codebase's pool is to keep", ["codebase"],
               sizes.items()),
        _gauge("isolator_warm_worktrees", "Warm worktrees by codebase and state (ready, making, refreshing, "
               "removing, failed, claimed)", ["codebase", "state"],
               [((row["codebase"], row["state"]), row["n"]) for row in warm if row["state"] is not None]),
        _counter("isolator_warm_claims", "Creates that claimed a warm worktree, by codebase", ["codebase"],
                 claims.items()),
    ]
    if settings.disk_budget_bytes is not None:
        families.append(_gauge("isolator_disk_budget_bytes", "DISK_BUDGET_GB, per codebase, in bytes", [],
                               [((), settings.disk_budget_bytes)]))
    return families


def _key(labels: object) -> tuple[str, ...]:
    return labels if isinstance(labels, tuple) else (str(labels),)


def _counter(name: str, help: str, labels: list[str], samples: Iterable[tuple[object, float]]) -> Metric:
    family = CounterMetricFamily(name, help, labels=labels)
    for values, value in samples:
        family.add_metric(list(_key(values)), float(value))
    return family


def _gauge(name: str, help: str, labels: list[str], samples: Iterable[tuple[object, float]]) -> Metric:
    family = GaugeMetricFamily(name, help, labels=labels)
    for values, value in samples:
        family.add_metric(list(_key(values)), float(value))
    return family


def _histogram(name: str, help: str, label: str, buckets: Sequence[float], rows: list[asyncpg.Record]) -> Metric:
    family = HistogramMetricFamily(name, help, labels=[label])
    counts: dict[str, list[int]] = {}
    sums: dict[str, float] = {}
    for row in rows:  # bucket k: the values over the first k bounds and within the next (k = len: over them all)
        counts.setdefault(row["label"], [0] * (len(buckets) + 1))[row["bucket"]] += row["n"]
        sums[row["label"]] = sums.get(row["label"], 0.0) + row["total"]
    for value, per_bucket in counts.items():
        cumulative = list(itertools.accumulate(per_bucket))
        family.add_metric([value], [*((repr(float(bound)), cumulative[index]) for index, bound in enumerate(buckets)),
                                    ("+Inf", cumulative[-1])], sums[value])
    return family
