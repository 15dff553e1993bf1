"""A worker's /metrics at METRICS_PORT (docs/observability.md): over real HTTP, the Temporal SDK's own metrics
of its workers (through its runtime's Prometheus exporter) beside the worker's counters; what PostgreSQL
records is left to the API's /metrics, so a sum over every target counts it once."""

from __future__ import annotations

from pathlib import Path
from typing import AsyncIterator

import asyncpg
import httpx
import pytest
from temporalio.client import Client

from api.app import create_app
from isolator import temporal_metrics
from isolator.payloads import DATA_CONVERTER
from isolator.settings import Settings
from tests.conftest import free_port
from tests.gitrepos import make_repo
from tests.metrics import dashboard_expressions, names_in, parsed, sample_names, value
from workers.metrics_server import serving_metrics
from workers.temporal_server import TemporalDevServer
from workers.worker import running_workers


@pytest.fixture
async def exporting_client(temporal_server: TemporalDevServer) -> AsyncIterator[Client]:
    """A client whose runtime exports the SDK's metrics, as `isolator worker` makes its own with METRICS_PORT."""
    address = temporal_metrics.free_loopback_address()
    runtime = temporal_metrics.prometheus_runtime(address)
    temporal_metrics.use(address)
    try:
        yield await Client.connect(temporal_server.address, runtime=runtime, data_converter=DATA_CONVERTER)
    finally:
        temporal_metrics.use(None)


async def test_a_workers_port_serves_temporals_metrics_and_its_own(settings: Settings, db: asyncpg.Pool,
                                                                   exporting_client: Client, tmp_path: Path) -> None:
    settings = settings.model_copy(update={"metrics_port": free_port()})
    app = create_app(settings, temporal=exporting_client, pool=db)
    async with running_workers(exporting_client, db, settings), serving_metrics(settings) as server:
        assert server is not None and server.started
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://isolator.test") as api:
            registered = await api.post("/api/codebases", json={"path": str(make_repo(tmp_path / "repos" / "p"))})
            assert registered.status_code == 201, registered.text
            said = await api.post("/test/message", params={"wait": "true"},
                                  json={"conversationId": "worker-metrics", "message": "hello"})
            assert said.status_code == 200, said.text
        async with httpx.AsyncClient() as scraper:
            response = await scraper.get(f"http://127.0.0.1:{settings.metrics_port}/metrics")
    assert response.status_code == 200, response.text
    samples = parsed(response.text)
    names = {name for name, _ in samples}
    temporal = {name for name in names if name.startswith("temporal_")}
    assert {"temporal_workflow_completed_total", "temporal_activity_execution_latency_seconds_count",
            "temporal_num_pollers"} <= temporal, sorted(temporal)
    assert value(samples, "temporal_workflow_completed_total", workflow_type="MessageWorkflow") >= 1
    assert value(samples, "isolator_messages_total", platform="test", outcome="created") >= 1
    assert not any(name.startswith("isolator_agent_runs") for name in names), "the API's to serve"
    # the Grafana dashboard's Temporal panels read what the SDK exports
    assert names_in(dashboard_expressions(), "temporal_") - sample_names(response.text) == set()
