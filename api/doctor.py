"""`GET /api/doctor`: what `isolator doctor` prints, as JSON, behind the API's door (activities/doctor/).

It checks from the API's process: the agent and the sandbox as this host has them, which is the
worker's only where both run on the same machine.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated

from fastapi import APIRouter, Depends
from pydantic import BaseModel

from activities.doctor.report import all_ok, run_checks
from api.deps import get_settings, require_api_token
from isolator.settings import Settings

router = APIRouter(prefix="/api/doctor", tags=["doctor"], dependencies=[Depends(require_api_token)])


class CheckOut(BaseModel):
    name: str
    ok: bool
    problem: str  # empty when OK
    fix: str  # empty when OK
    detail: str  # what was found when OK


class Doctor(BaseModel):
    ok: bool  # every check passed: `isolator doctor` would exit 0
    checks: list[CheckOut]


@router.get("", response_model=Doctor)
async def doctor(settings: Annotated[Settings, Depends(get_settings)]) -> Doctor:
    checks = await run_checks(settings)
    return Doctor(ok=all_ok(checks), checks=[CheckOut(**asdict(check)) for check in checks])
