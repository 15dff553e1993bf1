"""`/hosts`: every worker host of the deployment, alive or silent since when, with its workers, codebases, agent
runs and free disk; the API processes; and every process whose behaviour settings differ from the others'
(activities/hosts/liveness.py, the same view as `GET /api/hosts`)."""

from __future__ import annotations

from typing import Annotated

import asyncpg
from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from activities.hosts.liveness import deployment_view
from activities.hosts.presence import SILENT_AFTER_SECONDS
from api.dashboard.access import Session, viewer
from api.dashboard.rendering import PageRoute, render
from api.deps import get_pool

router = APIRouter(route_class=PageRoute)


@router.get("/hosts", include_in_schema=False)
async def hosts(
    request: Request,
    session: Annotated[Session, Depends(viewer)],
    pool: Annotated[asyncpg.Pool, Depends(get_pool)],
) -> Response:
    view = await deployment_view(pool)
    return render(request, session, "hosts.html", view=view, silent_after=int(SILENT_AFTER_SECONDS))
