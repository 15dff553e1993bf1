"""Liveness and readiness."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

router = APIRouter(tags=["health"])


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/readyz", responses={503: {"description": "Not ready: the body names the dependency that did "
                                                     "not answer (PostgreSQL or Temporal)"}})
async def readyz(request: Request) -> JSONResponse:
    """Ready when both PostgreSQL and Temporal answer."""
    checks: dict[str, str] = {}
    try:
        await asyncio.wait_for(request.app.state.pool.fetchval("SELECT 1"), timeout=2)
        checks["database"] = "ok"
    except Exception as error:  # any failure means not ready; say which
        checks["database"] = f"unavailable: {type(error).__name__}"
    try:
        await asyncio.wait_for(request.app.state.temporal.service_client.check_health(), timeout=2)
        checks["temporal"] = "ok"
    except Exception as error:
        checks["temporal"] = f"unavailable: {type(error).__name__}"
    ready = all(value == "ok" for value in checks.values())
    return JSONResponse({"status": "ready" if ready else "not ready", **checks}, status_code=200 if ready else 503)
