"""The FastAPI application: routers, and the clients they share."""

from __future__ import annotations

import json
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

import asyncpg
from fastapi import FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from temporalio.client import Client

from activities.database import create_pool
from api import approvals, automations, codebases, dashboard, docs, doctor, environments, health, refusals, runs, test_adapter
from api import metrics
from api import host_list
from api import codebase_moves
from api.hosts import HostCheck
from api.platforms import automation_webhook
from api.platforms.discord import webhook as discord
from api.platforms.github import webhook as github
from api.platforms.limits import WebhookBodyLimit
from api.platforms.slack import webhook as slack
from api.platforms.telegram import webhook as telegram
from api.request_hints import request_hint
from api.throttle import TokenThrottle
from isolator import tracing
from isolator.payloads import connect
from isolator.settings import Settings

# Seconds the server's shutdown waits for open responses: a dashboard page's event stream stays open as
# long as its run goes on (the browser reconnects to the next server by itself).
SHUTDOWN_GRACE_SECONDS = 10


def create_app(settings: Settings, *, temporal: Client | None = None, pool: asyncpg.Pool | None = None) -> FastAPI:
    """The app; unless given both clients, it connects to PostgreSQL and Temporal itself."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if pool is not None and temporal is not None:
            yield  # the caller owns the clients
            await app.state.run_listener.close()
            return
        app.state.pool = await create_pool(_require(settings.database_url, "DATABASE_URL"))
        try:
            app.state.temporal = await connect(settings.temporal_address, settings.temporal_namespace)
            yield
        finally:
            await app.state.run_listener.close()
            await app.state.pool.close()

    # FastAPI's own schema and pages take no dependency: api/docs.py serves them behind the API's door.
    app = FastAPI(title="isolator", version="0.1.0", lifespan=lifespan, openapi_url=None, docs_url=None,
                  redoc_url=None)
    app.state.settings = settings
    app.state.token_throttle = TokenThrottle()  # wrong tokens, wherever they are tried: one count per address
    app.state.pool, app.state.temporal = pool, temporal
    app.include_router(health.router)
    app.include_router(codebases.router)
    app.include_router(codebase_moves.router)
    app.include_router(environments.router)
    app.include_router(runs.router)
    app.include_router(refusals.router)
    app.include_router(approvals.router)
    app.include_router(automations.router)
    app.include_router(automation_webhook.key_router)
    app.include_router(automation_webhook.webhook_router)  # signed per automation, 503 without ISOLATOR_SECRET_KEY
    app.include_router(doctor.router)
    app.include_router(metrics.router)
    app.include_router(host_list.router)
    dashboard.install(app, settings)
    docs.install(app)
    if settings.test_adapter:
        app.include_router(test_adapter.router)
        app.include_router(approvals.test_router)
    # A platform is served only when its secret is configured; anything else cannot be verified.
    if settings.github_webhook_secret or settings.isolator_secret_key:  # the latter: an App the dashboard stored
        app.include_router(github.build_router(settings))
    if settings.slack_signing_secret:
        app.include_router(slack.build_router(settings))
    if settings.telegram_webhook_secret:
        app.include_router(telegram.build_router(settings))
    if settings.discord_public_key:
        app.include_router(discord.build_router(settings))
    app.add_middleware(WebhookBodyLimit)
    app.add_middleware(HostCheck, settings=settings)  # added last: the outermost, before anything else reads
    app.add_exception_handler(RequestValidationError, _invalid_request)
    tracing.instrument_app(app)  # with tracing on, each request is a span (isolator/tracing.py)
    return app


class _AsciiJSONResponse(JSONResponse):
    """JSON with non-ASCII escaped: a lone surrogate echoed from the input cannot be encoded as UTF-8."""

    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")


async def _invalid_request(request: Request, error: Exception) -> JSONResponse:
    """FastAPI's 422 for a request that fails validation, naming the field, what is wrong and the limit
    (`msg`, `ctx`), without the value sent: echoed back, a 200 KB message came back whole. (Its default
    handler also answers 500 to a lone surrogate.) Each problem's `hint` says what the route takes there."""
    assert isinstance(error, RequestValidationError)
    route = request.scope.get("route")
    problems = []
    for problem in error.errors():
        shown = {key: value for key, value in problem.items() if key not in ("input", "url")}
        if (hint := request_hint(route, tuple(problem.get("loc", ())))) is not None:
            shown["hint"] = hint
        problems.append(shown)
    return _AsciiJSONResponse({"detail": jsonable_encoder(problems)}, status_code=422)


def _require(value: str | None, name: str) -> str:
    if not value:
        raise RuntimeError(f"{name} is not set")
    return value
