"""`/runs/{id}`: a run's message and transcript (api/dashboard/transcript.py), live while it runs
(server-sent events, api/dashboard/live.py), and at its end its facts and changes, sent to the open
page as they are rendered here; its raw log at `/runs/{id}/log`; and `/stop`'s action for it, asked first."""

from __future__ import annotations

import uuid
from datetime import datetime, timezone
from typing import Annotated, Any

import asyncpg
from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import PlainTextResponse, Response, StreamingResponse
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from api.dashboard.access import Refused, Session, actor, viewer
from api.approvals import OPERATOR
from api.dashboard.answers import request_view
from api.dashboard.live import FINAL, RunListener, offsets
from api.dashboard.rendering import HEADERS, PageRoute, render, templates
from api.dashboard.transcript import Transcript, patch_by_file, transcript
from api.deps import get_client, get_pool
from isolator.contracts.agent import StopReport, StopRequest
from isolator.contracts.environment import environment_workflow_id
from workflows.chat.agent_texts import stopped

router = APIRouter(route_class=PageRoute)

_RUN = """
SELECT r.*, e.branch_name, e.working_path, e.status AS environment_status, c.name AS codebase,
       p.url AS pr_url, p.number AS pr_number, p.title AS pr_title
FROM agent_runs r JOIN isolation_environments e ON e.id = r.environment_id JOIN codebases c ON c.id = e.codebase_id
LEFT JOIN pull_requests p ON p.codebase_id = e.codebase_id AND p.branch_name = e.branch_name
WHERE r.id = $1
"""
COUNTED_LATER = "counted at the end"  # the agent reports its usage once, when it ends
NOT_REPORTED = "not reported by the agent"  # Codex reports no money; a plain program reports nothing


async def _run(pool: asyncpg.Pool, run_id: uuid.UUID) -> asyncpg.Record:
    row = await pool.fetchrow(_RUN, run_id)
    if row is None:
        raise Refused(404, f"No run {run_id}.")
    return row


def facts(run: asyncpg.Record) -> dict[str, Any]:
    """What the page says of the run, as text: rendered into the page, and sent to the open page with each
    change of the run's state (run.js shows them in place)."""
    final = run["status"] in FINAL
    started, finished = run["started_at"], run["finished_at"]
    waited = f", after {duration(started, run['queued_at'])} in the queue" if started else ""
    cost = templates.env.filters["usd"](float(run["cost_usd"])) if run["cost_usd"] is not None else None
    pr = {"url": run["pr_url"], "number": run["pr_number"], "title": run["pr_title"]} if run["pr_url"] else None
    return {
        "status": run["status"],
        "status_text": run["status"] + (f" (exit code {run['exit_code']})" if run["exit_code"] is not None else ""),
        "queued": at(run["queued_at"]),
        "started": at(started) + waited if started else "not yet",
        "finished": at(finished) if finished else "not yet",
        "duration": duration(finished, started) if started and finished else ("running" if started else "not started"),
        "cost": cost or (NOT_REPORTED if final else COUNTED_LATER),
        "tokens": _tokens(run) or (NOT_REPORTED if final else COUNTED_LATER),
        "changed": list(run["changed_files"]),
        "commits": f"{run['commits']} commit{'s' if run['commits'] > 1 else ''} made." if run["commits"] else "",
        "pr": pr,
    }


def _tokens(run: asyncpg.Record) -> str:
    counts = {name: run[f"{name}_tokens"] or 0 for name in ("input", "output", "cache_read", "cache_write")}
    if not any(counts.values()):
        return ""
    said = f"{counts['input']:,} in, {counts['output']:,} out"
    if counts["cache_read"] or counts["cache_write"]:
        said += f", {counts['cache_read']:,} read from and {counts['cache_write']:,} written to the cache"
    return said


def at(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def duration(end: datetime, start: datetime) -> str:
    seconds = max((end - start).total_seconds(), 0.0)
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, seconds = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    return f"{minutes // 60} h {minutes % 60:02d} min"


async def facts_and_edits(pool: asyncpg.Pool, run_id: uuid.UUID) -> dict[str, Any]:
    """The run's facts as they are now, with the diffs of the files its agent's edit tools wrote, for
    the live page."""
    run = await _run(pool, run_id)
    return {**facts(run), "edits": _diffs(run, transcript(run["log"], run["working_path"]))}


def _diffs(run: asyncpg.Record, read: Transcript) -> dict[str, str]:
    """Each changed file's diff: git's, of the worktree before and after the run (what changed however it
    was written, a command's writes too), else what the agent's edit tools wrote (a run still going)."""
    return {**read.edits, **patch_by_file(run["diff"])}


@router.get("/runs/{run_id}", include_in_schema=False)
async def run_page(
    run_id: uuid.UUID,
    request: Request,
    session: Annotated[Session, Depends(viewer)],
    pool: Annotated[asyncpg.Pool, Depends(get_pool)],
) -> Response:
    run = await _run(pool, run_id)
    live = run["status"] not in FINAL
    # The live stream goes on from the last whole line of the log: its events are read a line at a time.
    log_at = run["log"].rfind("\n") + 1 if live else len(run["log"])
    read = transcript(run["log"][:log_at], run["working_path"])
    read.edits = _diffs(run, read)
    asked = await pool.fetch("SELECT * FROM approvals WHERE run_id = $1 ORDER BY created_at", run_id)
    return render(request, session, "run.html", run=run, live=live, facts=facts(run), log_at=log_at, transcript=read,
                  approvals=[request_view(row, at) for row in asked], operator=OPERATOR)


@router.get("/runs/{run_id}/log", include_in_schema=False)
async def run_log(
    run_id: uuid.UUID,
    session: Annotated[Session, Depends(viewer)],
    pool: Annotated[asyncpg.Pool, Depends(get_pool)],
) -> Response:
    """The raw log as the agent printed it (an event stream, or standard error), as plain text."""
    log = await pool.fetchval("SELECT log FROM agent_runs WHERE id = $1", run_id)
    if log is None:
        raise Refused(404, f"No run {run_id}.")
    return PlainTextResponse(log, headers=HEADERS)


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
    worktree = await pool.fetchval("SELECT e.working_path FROM agent_runs r JOIN isolation_environments e "
                                   "ON e.id = r.environment_id WHERE r.id = $1", run_id)
    headers = {**HEADERS, "X-Accel-Buffering": "no"}  # a proxy in front must not hold the events back
    stream = listener.events(pool, str(run_id), output_at, log_at, worktree, lambda: facts_and_edits(pool, run_id))
    return StreamingResponse(stream, media_type="text/event-stream", headers=headers)


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
