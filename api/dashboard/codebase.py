"""`/codebases/{name}`: its environments as a table (sorted, filtered and paginated in the database,
so a thousand rows cost one page's worth), each with its state (a refused removal read from Temporal),
the cleanup's verdict and its disk (or when it will be measured); its warm worktrees, and its archives."""

from __future__ import annotations

import math
import uuid
from typing import Annotated, Literal

import asyncpg
from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response
from temporalio.client import Client

from activities.hosts.liveness import liveness_of
from api.dashboard.access import Refused, Session, viewer
from api.dashboard.conversations import conversation_links
from api.dashboard.disk import next_cleanup
from api.dashboard.refusals import refusals, refused_environments
from api.dashboard.rendering import PageRoute, render
from api.dashboard.verdicts import merged_column, verdict
from api.deps import get_client, get_pool, get_settings
from isolator.settings import Settings

router = APIRouter(route_class=PageRoute)

PAGE_SIZE = 50
# Sortable columns: the query string names a key, never SQL.
SORTS = {"branch": "branch_name", "state": "state", "setup": "setup_state", "activity": "last_activity",
         "disk": "disk_bytes", "created": "created_at"}

_ENVIRONMENTS = """
WITH listed AS (
  SELECT e.id, e.branch_name, e.status, e.setup_state, e.disk_bytes, e.disk_measured_at, e.merge_proof, e.created_at,
         -- a refused removal is its workflow's, not the row's: $7 lists them
         CASE WHEN e.id = ANY($7::uuid[]) THEN 'refused' ELSE e.status END AS state,
         e.created_by_platform, e.workflow_type, e.workflow_id,
         coalesce((SELECT max(v.last_activity_at) FROM conversations v WHERE v.environment_id = e.id),
                  e.created_at) AS last_activity,
         (SELECT coalesce(array_agg(v.platform || ':' || v.platform_conversation_id ORDER BY v.id), '{}')
            FROM conversations v WHERE v.environment_id = e.id) AS conversations,
         (SELECT count(*) FROM conversations v WHERE v.environment_id = e.id AND v.closed_at IS NULL
             AND (v.platform = 'telegram' OR v.last_activity_at > now() - make_interval(days => $2))) AS live,
         (SELECT count(*) FROM agent_runs r WHERE r.environment_id = e.id
             AND r.status IN ('running', 'queued')) AS busy,
         p.url AS pr_url, p.number AS pr_number, p.title AS pr_title, p.state AS pr_state
  FROM isolation_environments e
  LEFT JOIN pull_requests p ON p.codebase_id = e.codebase_id AND p.branch_name = e.branch_name
  WHERE e.codebase_id = $1 AND e.status IN ('active', 'hibernated')
    AND ($3::text IS NULL OR e.branch_name ILIKE '%' || $3 || '%' ESCAPE '\\')
)
SELECT *, count(*) OVER () AS total FROM listed WHERE $4::text IS NULL OR state = $4
ORDER BY ORDERING, id LIMIT $5 OFFSET $6
"""

_ARCHIVES = """
SELECT id, branch_name, removal_reason, archived_at, destroyed_at, status, archive_ref,
       greatest(0, $2 - floor(extract(epoch FROM now() - archived_at) / 86400))::int AS days_left
FROM isolation_environments
WHERE codebase_id = $1 AND archive_ref IS NOT NULL AND archive_pruned_at IS NULL AND status = 'destroyed'
      AND restored_as IS NULL
ORDER BY archived_at DESC, id LIMIT 200
"""


def _like(text: str) -> str:
    """A filter as an ILIKE fragment that matches itself only: `%`, `_` and `\\` are escaped."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


@router.get("/codebases/{name}", include_in_schema=False)
async def codebase_page(
    name: str,
    request: Request,
    session: Annotated[Session, Depends(viewer)],
    pool: Annotated[asyncpg.Pool, Depends(get_pool)],
    client: Annotated[Client, Depends(get_client)],
    settings: Annotated[Settings, Depends(get_settings)],
    sort: Literal["branch", "state", "setup", "activity", "disk", "created"] = "activity",
    direction: Annotated[Literal["asc", "desc"], Query(alias="dir")] = "desc",
    branch: Annotated[str | None, Query(max_length=200)] = None,
    # The form's "any" sends an empty state: no filter.
    state: Literal["active", "hibernated", "refused", ""] | None = None,
    page: Annotated[int, Query(ge=1, le=100_000)] = 1,
) -> Response:
    codebase = await pool.fetchrow("SELECT * FROM codebases WHERE name = $1", name)
    if codebase is None:
        raise Refused(404, f"No codebase named {name!r}.")
    threshold = settings.stale_threshold_days
    refused = [uuid.UUID(environment_id) for environment_id, codebase_name
               in (await refused_environments(client, settings.task_queue)).items() if codebase_name == name]
    rows = await pool.fetch(
        _ENVIRONMENTS.replace("ORDERING", f"{SORTS[sort]} {direction.upper()} NULLS LAST"),
        codebase["id"], threshold, _like(branch) if branch else None, state or None, PAGE_SIZE, (page - 1) * PAGE_SIZE,
        refused,
    )
    total = rows[0]["total"] if rows else 0
    why_refused = await refusals(client, [str(row["id"]) for row in rows if row["state"] == "refused"])
    environments = [
        {**row, "links": conversation_links(row["conversations"], codebase["repository_url"]),
         "verdict": verdict(row, threshold, why_refused.get(str(row["id"]))), "merged": merged_column(row),
         "pr": {"url": row["pr_url"], "number": row["pr_number"], "title": row["pr_title"], "state": row["pr_state"]}
         if row["pr_url"] else None}
        for row in map(dict, rows)
    ]
    archives = await pool.fetch(_ARCHIVES, codebase["id"], settings.archive_retention_days)
    warm = await pool.fetchval("SELECT count(*) FROM warm_worktrees WHERE codebase_id = $1 AND state = 'ready'",
                               codebase["id"])
    filters = {"sort": sort, "dir": direction, "branch": branch or "", "state": state or ""}
    return render(request, session, "codebase.html", codebase=codebase, environments=environments,
                  archives=archives, total=total, warm=warm, page=page, pages=max(1, math.ceil(total / PAGE_SIZE)),
                  filters=filters, threshold=threshold, next_cleanup=await next_cleanup(client),
                  host=await liveness_of(pool, codebase["host"]))
