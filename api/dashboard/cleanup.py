"""`/cleanup`: the dry run of the next scheduled cleanup (every codebase, every decision with its
reason) and the last cleanup's report; and "clean up now", asked first: the scheduled CleanupWorkflow
itself, run at once, its report shown."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Annotated

import asyncpg
from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response
from temporalio.client import Client, WorkflowFailureError

from activities.database import codebase_from_row
from api.dashboard.access import Session, actor, viewer
from api.dashboard.cleanup_reports import LastCleanup, last_cleanup
from api.dashboard.rendering import PageRoute, render
from api.deps import get_client, get_pool, get_settings
from isolator.contracts.cleanup import CleanupRunReport
from isolator.contracts.dashboard import CleanupPreview
from isolator.settings import Settings

router = APIRouter(route_class=PageRoute)

PREVIEW_SECONDS = 120


@router.get("/cleanup", include_in_schema=False)
async def cleanup_page(
    request: Request,
    session: Annotated[Session, Depends(viewer)],
    pool: Annotated[asyncpg.Pool, Depends(get_pool)],
    client: Annotated[Client, Depends(get_client)],
    settings: Annotated[Settings, Depends(get_settings)],
) -> Response:
    codebases = [codebase_from_row(row) for row in await pool.fetch("SELECT * FROM codebases ORDER BY name")]
    problem = None
    previews: list[CleanupPreview] = []
    try:
        previews = await client.execute_workflow(
            "CleanupPreviewWorkflow", codebases, id=f"dashboard:cleanup-preview:{uuid.uuid4()}",
            task_queue=settings.task_queue, result_type=list[CleanupPreview],
            execution_timeout=timedelta(seconds=PREVIEW_SECONDS),
        )
    except WorkflowFailureError as error:
        problem = f"The dry run did not finish ({error.cause or error}); reload the page to try again."
    return render(request, session, "cleanup.html", previews=previews, problem=problem,
                  last=await last_cleanup(client, settings.task_queue), settings=settings)


@router.get("/cleanup/run", include_in_schema=False)
async def confirm_cleanup(request: Request, session: Annotated[Session, Depends(viewer)]) -> Response:
    return render(request, session, "confirm_cleanup.html")


@router.post("/cleanup/run", include_in_schema=False)
async def cleanup_now(
    request: Request,
    form: Annotated[dict[str, str], Depends(actor)],
    client: Annotated[Client, Depends(get_client)],
    settings: Annotated[Settings, Depends(get_settings)],
) -> Response:
    workflow_id = f"isolation-cleanup:dashboard:{uuid.uuid4()}"
    report = await client.execute_workflow("CleanupWorkflow", id=workflow_id, task_queue=settings.task_queue,
                                           result_type=CleanupRunReport)
    return render(request, request.state.session, "cleanup_done.html", last=LastCleanup(workflow_id, None, report))
