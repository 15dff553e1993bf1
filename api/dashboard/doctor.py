"""`/doctor`: what `isolator doctor` finds, checked when the page is opened (activities/doctor/), from the
API's process: the failed checks first, each with what is wrong and its fix, then what is OK."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from activities.doctor.report import run_checks
from api.dashboard.access import Session, viewer
from api.dashboard.rendering import PageRoute, render
from api.deps import get_settings
from isolator.settings import Settings

router = APIRouter(route_class=PageRoute)


@router.get("/doctor", include_in_schema=False)
async def doctor(
    request: Request,
    session: Annotated[Session, Depends(viewer)],
    settings: Annotated[Settings, Depends(get_settings)],
) -> Response:
    checks = await run_checks(settings)
    return render(request, session, "doctor.html", failed=[check for check in checks if not check.ok],
                  passed=[check for check in checks if check.ok])
