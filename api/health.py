"""Liveness and readiness."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from activities.hosts.liveness import all_liveness
from isolator.contracts.hosts import HostLiveness

router = APIRouter(tags=["health"])


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/readyz", responses={503: {"description": "Not ready: the body names the dependency that did "
                                                     "not answer (PostgreSQL or Temporal)"}})
async def readyz(request: Request) -> JSONResponse:
    """Ready when both PostgreSQL and Temporal answer. `hosts` says each worker host's liveness; a silent host
    does not make this API unready (it serves the other hosts' codebases, and answers for the silent one's)."""
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
    hosts = await _hosts(request) if checks["database"] == "ok" else {}
    return JSONResponse({"status": "ready" if ready else "not ready", **checks, "hosts": hosts},
                        status_code=200 if ready else 503)


async def _hosts(request: Request) -> dict[str, str]:
    """`hostA: alive (2 workers)`, `hostB: silent since 12:03:07 UTC`, one line per host."""
    try:
        known = await asyncio.wait_for(all_liveness(request.app.state.pool), timeout=2)
    except Exception as error:  # the hosts are extra: their lookup failing leaves readiness as it is
        return {"error": f"unavailable: {type(error).__name__}"}
    return {host.host: _line(host) for host in known}


def _line(host: HostLiveness) -> str:
    if host.alive:
        return f"alive ({host.workers} worker{'s' if host.workers != 1 else ''})"
    return f"silent since {host.last_seen_text}" if host.last_seen_text else "no worker has started"
