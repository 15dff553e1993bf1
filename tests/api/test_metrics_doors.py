"""Who may read /metrics (docs/observability.md): without API_TOKEN, loopback clients only; with it, the bearer
token METRICS_TOKEN, which opens /metrics and nothing else. The API's and a worker's port keep the same door."""

from __future__ import annotations

import asyncpg
import httpx
import pytest
from pydantic import SecretStr
from temporalio.client import Client

from api.app import create_app
from isolator.settings import Settings
from workers.metrics_server import listen_address, metrics_app

OUTSIDE = ("203.0.113.7", 40000)  # an address that is not this machine's loopback
LOOPBACK = ("127.0.0.1", 40000)


def client_of(app: object, address: tuple[str, int]) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app, client=address),  # type: ignore[arg-type]
                             base_url="http://isolator.test")


@pytest.fixture
def with_tokens(settings: Settings) -> Settings:
    return settings.model_copy(update={"api_token": SecretStr("the-api-token"),
                                       "metrics_token": SecretStr("the-metrics-token")})


async def test_without_api_token_only_loopback_reads_metrics(settings: Settings, db: asyncpg.Pool,
                                                             temporal: Client) -> None:
    app = create_app(settings, temporal=temporal, pool=db)
    async with client_of(app, OUTSIDE) as far, client_of(app, LOOPBACK) as near:
        refused = await far.get("/metrics")
        assert refused.status_code == 403
        assert "loopback" in refused.json()["detail"]
        assert (await near.get("/metrics")).status_code == 200
    assert listen_address(settings) == "127.0.0.1"


async def test_metrics_token_opens_metrics_and_not_the_api(with_tokens: Settings, db: asyncpg.Pool,
                                                           temporal: Client) -> None:
    app = create_app(with_tokens, temporal=temporal, pool=db)
    scraper = {"Authorization": "Bearer the-metrics-token"}
    async with client_of(app, OUTSIDE) as far:
        assert (await far.get("/metrics", headers=scraper)).status_code == 200
        assert (await far.get("/api/codebases", headers=scraper)).status_code == 401
        assert (await far.get("/api/runs", headers=scraper)).status_code == 401
        assert (await far.get("/metrics")).status_code == 401
        # the API's key is no scraper's: a leaked scrape config opens nothing else, and the API's key not this
        assert (await far.get("/metrics", headers={"Authorization": "Bearer the-api-token"})).status_code == 401
        assert (await far.get("/api/codebases", headers={"Authorization": "Bearer the-api-token"})).status_code == 200
    assert listen_address(with_tokens) == "0.0.0.0"


async def test_with_api_token_and_no_metrics_token_metrics_say_what_to_set(settings: Settings, db: asyncpg.Pool,
                                                                          temporal: Client) -> None:
    app = create_app(settings.model_copy(update={"api_token": SecretStr("the-api-token")}), temporal=temporal, pool=db)
    async with client_of(app, LOOPBACK) as near:
        refused = await near.get("/metrics", headers={"Authorization": "Bearer the-api-token"})
    assert refused.status_code == 403
    assert "METRICS_TOKEN" in refused.json()["detail"]


async def test_a_workers_port_keeps_the_same_door(settings: Settings, with_tokens: Settings) -> None:
    async with client_of(metrics_app(settings), OUTSIDE) as far, client_of(metrics_app(settings), LOOPBACK) as near:
        assert (await far.get("/metrics")).status_code == 403
        answered = await near.get("/metrics")
        assert answered.status_code == 200 and "isolator_messages_total" in answered.text
    async with client_of(metrics_app(with_tokens), OUTSIDE) as far:
        assert (await far.get("/metrics")).status_code == 401
        assert (await far.get("/metrics", headers={"Authorization": "Bearer the-metrics-token"})).status_code == 200
        # a name it does not answer to (a rebound one) is refused before the token is looked at
        assert (await far.get("http://attacker.example/metrics",
                              headers={"Authorization": "Bearer the-metrics-token"})).status_code == 400
