"""`/runs/{id}`: a run's message, answer and log, live while it runs (server-sent events, api/dashboard/
live.py), then final with its changes; and `/stop`'s action for it, asked first."""

from __future__ import annotations

import uuid
from typing import Annotated

import asyncpg
from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response, StreamingResponse
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from api.dashboard.access import Refused, Session, actor, viewer
from api.dashboard.live import FINAL, RunListener, offsets
from api.dashboard.rendering import HEADERS, PageRoute, render
from api.deps import get_client, get_pool
from isolator.contracts.agent import StopReport, StopRequest
from isolator.contracts.environment import environment_workflow_id
from workflows.chat.agent_texts import stopped

router = APIRouter(route_class=PageRoute)

_RUN = """
SELECT r.*, e.branch_name, e.status AS environment_status, c.name AS codebase,
       p.url AS pr_url, p.number AS pr_number, p.title AS pr_title
FROM agent_runs r JOIN isolation_environments e ON e.id = r.environment_id JOIN codebases c ON c.id = e.codebase_id
LEFT JOIN pull_requests p ON p.codebase_id = e.codebase_id AND p.branch_name = e.branch_name
WHERE r.id = $1
"""


async def _run(pool: asyncpg.Pool, run_id: uuid.UUID) -> asyncpg.Record:
    row = await pool.fetchrow(_RUN, run_id)
    if row is None:
        raise Refused(404, f"No run {run_id}.")
    return row


@router.get("/runs/{run_id}", include_in_schema=False)
async def run_page(
    run_id: uuid.UUID,
    request: Request,
    session: Annotated[Session, Depends(viewer)],
    pool: Annotated[asyncpg.Pool, Depends(get_pool)],
) -> Response:
    run = await _run(pool, run_id)
    # None: the agent reported no money (Codex) or no usage at all (a plain program)
    cost = float(run["cost_usd"]) if run["cost_usd"] is not None else None
    counts = {name: run[f"{name}_tokens"] for name in ("input", "output", "cache_read", "cache_write")}
    tokens = {name: count or 0 for name, count in counts.items()} if any(counts.values()) else None
    pr = {"url": run["pr_url"], "number": run["pr_number"], "title": run["pr_title"]} if run["pr_url"] else None
    return render(request, session, "run.html", run=run, live=run["status"] not in FINAL, cost=cost, tokens=tokens,
                  pr=pr)


@router.get("/runs/{run_id}/events", include_in_schema=False)
async def run_events(
    run_id: uuid.UUID,
    request: Request,
    session: Annotated[Session, Depends(viewer)],
    pool: Annotated[asyncpg.Pool, Depends(get_pool)],
    output: Annotated[int, Query(ge=0)] = 0,
    log: Annotated[int, Query(ge=0)] = 0,
) -> Response:
    output_at, log_at = offsets(request.headers.get("last-event-id"), output, log)
    listener: RunListener = request.app.state.run_listener
    headers = {**HEADERS, "X-Accel-Buffering": "no"}  # a proxy in front must not hold the events back
    return StreamingResponse(listener.events(pool, str(run_id), output_at, log_at), media_type="text/event-stream",
                             headers=headers)


@router.get("/runs/{run_id}/stop", include_in_schema=False)
async def confirm_stop(
    run_id: uuid.UUID,
    request: Request,
    session: Annotated[Session, Depends(viewer)],
    pool: Annotated[asyncpg.Pool, Depends(get_pool)],
) -> Response:
    return render(request, session, "confirm_stop.html", run=await _run(pool, run_id))


@router.post("/runs/{run_id}/stop", include_in_schema=False)
async def stop(
    run_id: uuid.UUID,
    request: Request,
    form: Annotated[dict[str, str], Depends(actor)],
    pool: Annotated[asyncpg.Pool, Depends(get_pool)],
    client: Annotated[Client, Depends(get_client)],
) -> Response:
    """`/stop` for the run's conversation, through its environment's workflow: the running run ends and
    the conversation's queued messages are dropped."""
    run = await _run(pool, run_id)
    report = StopReport()
    if run["status"] in ("running", "queued"):
        handle = client.get_workflow_handle(environment_workflow_id(str(run["environment_id"])))
        stop_request = StopRequest(str(run["environment_id"]), f"{run['platform']}:{run['conversation_id']}",
                                   key=f"dashboard:{uuid.uuid4()}")
        try:
            report = await handle.execute_update("stop_runs", stop_request, id=stop_request.key,
                                                 result_type=StopReport)
        except RPCError as error:
            if error.status != RPCStatusCode.NOT_FOUND:
                raise
    return render(request, request.state.session, "outcome.html", message=stopped(report), ok=True,
                  back=(f"/runs/{run_id}", "the run"), force_form=None)
