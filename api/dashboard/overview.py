"""`/`: the runs going on now (running, waiting for a person's answer, queued), each linked with its
conversation and how long it has been so; then every codebase at a glance: its environments by state
(active, hibernated, removal refused), its warm worktrees, its last activity, its disk against
DISK_BUDGET_GB (as recorded: the figure `/status` says too) and when the unmeasured ones will be measured,
its runs, and their cost today and this month against AGENT_DAILY_BUDGET_USD."""

from __future__ import annotations

from typing import Annotated

import asyncpg
from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response
from temporalio.client import Client

from activities.hosts.liveness import all_liveness
from activities.runs.sessions import today_utc
from api.dashboard.access import Session, viewer
from api.dashboard.disk import next_cleanup
from api.dashboard.refusals import refused_counts, refused_environments
from api.dashboard.rendering import PageRoute, render
from api.dashboard.today import today_figures
from api.deps import get_client, get_pool, get_settings
from isolator.settings import Settings

router = APIRouter(route_class=PageRoute)

_CODEBASES = """
SELECT c.id, c.name, c.default_branch, c.host,
       count(e.id) FILTER (WHERE e.status = 'active') AS active,
       count(e.id) FILTER (WHERE e.status = 'hibernated') AS hibernated,
       coalesce(sum(e.disk_bytes) FILTER (WHERE e.status = 'active'), 0) AS disk_bytes,
       count(e.disk_bytes) FILTER (WHERE e.status = 'active') AS measured,
       (SELECT count(*) FROM agent_runs r JOIN isolation_environments x ON x.id = r.environment_id
         WHERE x.codebase_id = c.id AND r.status = 'running') AS running,
       (SELECT count(*) FROM agent_runs r JOIN isolation_environments x ON x.id = r.environment_id
         WHERE x.codebase_id = c.id AND r.status = 'queued') AS queued,
       (SELECT count(*) FROM approvals a JOIN isolation_environments x ON x.id = a.environment_id
         WHERE x.codebase_id = c.id AND a.state = 'pending') AS waiting,
       (SELECT max(v.last_activity_at) FROM conversations v WHERE v.codebase_id = c.id) AS last_activity,
       (SELECT count(*) FROM warm_worktrees w WHERE w.codebase_id = c.id AND w.state = 'ready') AS warm,
       (SELECT coalesce(sum(r.cost_usd), 0)::float8 FROM agent_runs r
          JOIN isolation_environments x ON x.id = r.environment_id
         WHERE x.codebase_id = c.id AND r.started_at >= $1) AS cost_today,
       (SELECT coalesce(sum(r.cost_usd), 0)::float8 FROM agent_runs r
          JOIN isolation_environments x ON x.id = r.environment_id
         WHERE x.codebase_id = c.id AND r.started_at >= $2) AS cost_month
FROM codebases c
LEFT JOIN isolation_environments e ON e.codebase_id = c.id AND e.status IN ('active', 'hibernated')
GROUP BY c.id ORDER BY c.name
"""

# A run that waits for a person stays `waiting` once answered (the next run goes on): only its request's
# state says it still waits.
_RUNS_NOW = """
SELECT r.id, r.status, r.message, r.platform || ':' || r.conversation_id AS conversation, r.environment_id,
       e.branch_name, c.name AS codebase, a.summary AS asked,
       CASE r.status WHEN 'running' THEN coalesce(r.started_at, r.queued_at) WHEN 'queued' THEN r.queued_at
            ELSE a.created_at END AS since
FROM agent_runs r JOIN isolation_environments e ON e.id = r.environment_id JOIN codebases c ON c.id = e.codebase_id
LEFT JOIN approvals a ON a.run_id = r.id AND a.state = 'pending'
WHERE r.status IN ('running', 'queued') OR (r.status = 'waiting' AND a.id IS NOT NULL)
ORDER BY CASE r.status WHEN 'running' THEN 0 WHEN 'waiting' THEN 1 ELSE 2 END, since, r.id
LIMIT $1
"""
RUNS_SHOWN = 100


@router.get("/", include_in_schema=False)
async def overview(
    request: Request,
    session: Annotated[Session, Depends(viewer)],
    pool: Annotated[asyncpg.Pool, Depends(get_pool)],
    client: Annotated[Client, Depends(get_client)],
    settings: Annotated[Settings, Depends(get_settings)],
) -> Response:
    # a refused removal is its workflow's state: counted apart from the active ones it is still a row of
    refused = refused_counts(await refused_environments(client, settings.task_queue))
    budget = int(settings.disk_budget_gb * 1024**3) if settings.disk_budget_gb else None
    today = today_utc()
    rows = await pool.fetch(_CODEBASES, today, today.replace(day=1))
    # runs' cost since midnight UTC (what AGENT_DAILY_BUDGET_USD limits) and since the month's first day
    codebases = [
        {**row, "all_active": row["active"], "active": max(0, row["active"] - refused.get(row["name"], 0)),
         # nothing measured is no figure: not 0 KiB
         "disk_bytes": None if row["active"] and not row["measured"] else row["disk_bytes"],
         "refused": refused.get(row["name"], 0), "budget_bytes": budget, "cost_budget": settings.agent_daily_budget_usd}
        for row in map(dict, rows)
    ]
    runs = await pool.fetch(_RUNS_NOW, RUNS_SHOWN)
    return render(request, session, "overview.html", codebases=codebases, settings=settings, runs=runs,
                  today=await today_figures(pool, client, settings.task_queue),
                  next_cleanup=await next_cleanup(client),
                  any_unmeasured=any(cb["measured"] < cb["all_active"] for cb in codebases),
                  # hosts whose workers recorded themselves once and no longer do (isolator dev records its own)
                  silent_hosts={host.host: host for host in await all_liveness(pool)
                                if not host.alive and host.last_seen is not None})
