"""`GET /metrics`, in Prometheus' text format (docs/observability.md): what PostgreSQL records (read now,
api/metrics_state.py), this process's own counters (isolator/metrics.py), when the scheduled cleanup last
started, and the Temporal SDK's metrics of this process when it exports them.

Its door is the API's, with a key of its own: without API_TOKEN, loopback clients only; with it, the
bearer token METRICS_TOKEN, which opens /metrics and nothing else, so a scraper holds no key to the API.
A worker's METRICS_PORT serves the same door (workers/metrics_server.py)."""

from __future__ import annotations

import logging
import time
from datetime import datetime

from fastapi import APIRouter, Depends, HTTPException, Request, status
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from temporalio.client import Client
from temporalio.service import RPCError

from api.deps import check_bearer, get_settings, is_loopback_client
from api.metrics_state import StateSettings, state_metrics
from isolator import metrics
from isolator.contracts.cleanup import SCHEDULE_ID
from isolator.temporal_metrics import temporal_text

log = logging.getLogger(__name__)
SCHEDULE_LOOK_SECONDS = 60.0  # the schedule is asked at most this often: a scrape every 15 s costs no RPC


async def require_metrics_token(request: Request) -> None:
    settings = await get_settings(request)
    if settings.api_token is None:
        if not is_loopback_client(request):
            log.warning("GET /metrics refused: API_TOKEN is unset and the client is not on loopback")
            raise HTTPException(status.HTTP_403_FORBIDDEN,
                                detail="API_TOKEN is unset: /metrics answers only this machine's loopback address")
        return
    expected = settings.metrics_token
    if expected is None:
        raise HTTPException(status.HTTP_403_FORBIDDEN, detail="API_TOKEN is set and METRICS_TOKEN is not: set "
                            "METRICS_TOKEN and send it as `Authorization: Bearer <METRICS_TOKEN>`")
    check_bearer(request, expected, "metrics token", "METRICS_TOKEN")


router = APIRouter()


@router.get("/metrics", include_in_schema=False, dependencies=[Depends(require_metrics_token)])
async def serve_metrics(request: Request) -> Response:
    state = request.app.state
    settings = state.settings
    budget = int(settings.disk_budget_gb * 1024**3) if settings.disk_budget_gb else None
    families = await state_metrics(state.pool, StateSettings(settings.warm_worktrees, budget))
    families.append(await _cleanup_started(request, state.temporal))
    return Response(generate_latest(_Fetched(families)) + in_process_text() + await temporal_text(),
                    media_type=CONTENT_TYPE_LATEST)


def in_process_text() -> bytes:
    return generate_latest(metrics.REGISTRY)


class _Fetched(CollectorRegistry):
    """Families read before the rendering (the queries are async; a collector's collect() is not)."""

    def __init__(self, families: list[Metric]) -> None:
        super().__init__(auto_describe=False)
        self._families = families

    def collect(self):  # type: ignore[no-untyped-def] - the registry's own signature
        yield from self._families


async def _cleanup_started(request: Request, client: Client) -> Metric:
    """When the `isolation-cleanup` schedule last started a cleanup (no sample: it has not yet, or there is no
    schedule), as Temporal keeps it: a worker's restart forgets nothing."""
    family = GaugeMetricFamily("isolator_cleanup_last_started_timestamp_seconds",
                               "When the scheduled cleanup last started (Unix time)")
    cached: tuple[float, datetime | None] | None = getattr(request.app.state, "cleanup_started", None)
    if cached is None or time.monotonic() - cached[0] > SCHEDULE_LOOK_SECONDS:
        cached = (time.monotonic(), await _last_start(client))
        request.app.state.cleanup_started = cached
    if cached[1] is not None:
        family.add_metric([], cached[1].timestamp())
    return family


async def _last_start(client: Client) -> datetime | None:
    try:
        actions = (await client.get_schedule_handle(SCHEDULE_ID).describe()).info.recent_actions
    except RPCError:
        return None
    return max((action.started_at for action in actions), default=None)

