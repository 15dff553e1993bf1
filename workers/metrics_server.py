"""A worker's `GET /metrics` at METRICS_PORT (docs/observability.md): its own counters (what its workflows and
activities did: isolator/metrics.py) and the Temporal SDK's metrics of its workers. What PostgreSQL
records is the API's to serve, so that a sum over every target counts it once.

The API's door (api/metrics.py): without API_TOKEN it listens on 127.0.0.1 only; with it, on every
address, and answers only the bearer token METRICS_TOKEN. Its `Host` is checked as the API's is (a
loopback name, PUBLIC_URL's, or one of ALLOWED_HOSTS): no page on another site reads it through a
rebound name."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import AsyncIterator

import uvicorn
from fastapi import Depends, FastAPI
from fastapi.responses import Response
from prometheus_client import CONTENT_TYPE_LATEST

from api.hosts import HostCheck
from api.metrics import in_process_text, require_metrics_token
from api.throttle import TokenThrottle
from isolator.settings import Settings
from isolator.temporal_metrics import temporal_text
from workers.serving import ApiServer

log = logging.getLogger(__name__)


def metrics_app(settings: Settings) -> FastAPI:
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    app.state.settings = settings
    app.state.token_throttle = TokenThrottle()

    @app.get("/metrics", dependencies=[Depends(require_metrics_token)])
    async def serve_metrics() -> Response:
        return Response(in_process_text() + await temporal_text(), media_type=CONTENT_TYPE_LATEST)

    app.add_middleware(HostCheck, settings=settings)  # a name this worker answers to, as the API checks
    return app


def listen_address(settings: Settings) -> str:
    return "127.0.0.1" if settings.api_token is None else "0.0.0.0"


@contextlib.asynccontextmanager
async def serving_metrics(settings: Settings) -> AsyncIterator[ApiServer | None]:
    """The worker's /metrics while the block runs; nothing without METRICS_PORT."""
    if settings.metrics_port is None:
        yield None
        return
    config = uvicorn.Config(metrics_app(settings), host=listen_address(settings), port=settings.metrics_port,
                            log_level="warning", access_log=False)
    server = ApiServer(config)
    serving = asyncio.create_task(_serve(server))
    while not server.started and not serving.done():
        await asyncio.sleep(0.01)
    if not server.started:  # uvicorn said why (the port is taken): the worker goes on without it
        log.error("METRICS_PORT %d: /metrics could not be served", settings.metrics_port)
    else:
        log.info("metrics on http://%s:%d/metrics", config.host, settings.metrics_port)
    try:
        yield server
    finally:
        server.should_exit = True
        await asyncio.gather(serving, return_exceptions=True)


async def _serve(server: ApiServer) -> None:
    try:
        await server.serve()
    except SystemExit:  # uvicorn's answer to a port it cannot bind: kept in this task, not the worker's end
        pass
