"""`/automations`: every automation (docs/automations.md) with its triggers, its report place, its next
firing (from its Temporal Schedule), its last firings with their runs, and Pause, Resume and Run now
buttons. Each button does what `POST /api/automations/{name}/pause`, `/resume` and `/run` do (the same
functions of api/automations.py); the outcome page says what was done, or why not."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Awaitable, Callable

import asyncpg
from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import Response
from temporalio.client import Client

from activities.automations.records import AutomationRecords
from api import automations as automation_api
from api.automation_views import automation_view
from api.dashboard.access import Session, actor, viewer
from api.dashboard.rendering import PageRoute, render
from api.deps import get_client, get_pool, get_settings
from isolator.settings import Settings

router = APIRouter(route_class=PageRoute)
BACK = ("/automations", "the automations")


def _moment(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _shown(view: dict[str, Any]) -> dict[str, Any]:
    """The API's view with its times as datetimes, for the page's filters."""
    firings = [{**firing, "startedAt": _moment(firing["startedAt"]), "finishedAt": _moment(firing["finishedAt"])}
               for firing in view["firings"]]
    return {**view, "nextFiring": _moment(view["nextFiring"]), "firings": firings}


@router.get("/automations", include_in_schema=False)
async def automations(
    request: Request,
    session: Annotated[Session, Depends(viewer)],
    pool: Annotated[asyncpg.Pool, Depends(get_pool)],
    client: Annotated[Client, Depends(get_client)],
    settings: Annotated[Settings, Depends(get_settings)],
) -> Response:
    views = [_shown(await automation_view(pool, client, stored)) for stored in await AutomationRecords(pool).all()]
    return render(request, session, "automations.html", automations=views, switched_off=settings.automations == "off")


async def _act(request: Request, done: str, action: Callable[[], Awaitable[Any]]) -> Response:
    """The API's action, its refusal (an unknown name, a paused automation run now) said on the outcome page."""
    try:
        await action()
    except HTTPException as refused:
        return render(request, request.state.session, "outcome.html", status_code=refused.status_code, ok=False,
                      back=BACK, force_form=None, message=f"Not done: {refused.detail}.")
    return render(request, request.state.session, "outcome.html", ok=True, back=BACK, force_form=None, message=done)


@router.post("/automations/{name}/pause", include_in_schema=False)
async def pause(
    name: str,
    request: Request,
    form: Annotated[dict[str, str], Depends(actor)],
    pool: Annotated[asyncpg.Pool, Depends(get_pool)],
    client: Annotated[Client, Depends(get_client)],
) -> Response:
    return await _act(request, f"Paused `{name}`: its schedule fires no more, and its events start nothing, "
                               "until it is resumed.",
                      lambda: automation_api.pause_automation(name, pool, client))


@router.post("/automations/{name}/resume", include_in_schema=False)
async def resume(
    name: str,
    request: Request,
    form: Annotated[dict[str, str], Depends(actor)],
    pool: Annotated[asyncpg.Pool, Depends(get_pool)],
    client: Annotated[Client, Depends(get_client)],
) -> Response:
    return await _act(request, f"Resumed `{name}`: it fires again on its schedule and its events.",
                      lambda: automation_api.resume_automation(name, pool, client))


@router.post("/automations/{name}/run", include_in_schema=False)
async def run_now(
    name: str,
    request: Request,
    form: Annotated[dict[str, str], Depends(actor)],
    pool: Annotated[asyncpg.Pool, Depends(get_pool)],
    client: Annotated[Client, Depends(get_client)],
    settings: Annotated[Settings, Depends(get_settings)],
) -> Response:
    return await _act(request, f"Started a firing of `{name}` now: it reports in its place, and shows under its "
                               "last firings with its run.",
                      lambda: automation_api.run_automation(name, pool, client, settings))
