"""One trace per message survives a killed worker: the worker is SIGKILLed while a message's reply is
being sent, its activity is retried by the restarted worker, and the message's trace still runs from
the webhook's request, parent by parent, down to the retried activity and to the agent's process.
The API traces in this process (in-memory exporter); the worker process exports by OTLP/HTTP to a
receiver of the test's (tests/fakes/otlp_traces.py), as it would to a collector."""

from __future__ import annotations

from pathlib import Path
from typing import AsyncIterator

import asyncpg
import httpx
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from api.app import create_app
from isolator import tracing
from isolator.payloads import connect
from isolator.settings import Settings
from tests.agents import command
from tests.fakes.otlp_traces import OtlpTraces
from tests.faults.conftest import WorkerProcess, register, wait_for
from tests.traces import SpanSeen, ancestry, seen, spans_when
from workers.temporal_server import TemporalDevServer


@pytest.fixture
async def traces() -> AsyncIterator[OtlpTraces]:
    server = OtlpTraces()
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
async def traced_api(settings: Settings, db: asyncpg.Pool,
                     temporal_server: TemporalDevServer) -> AsyncIterator[tuple[httpx.AsyncClient, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.use_provider(provider)
    try:
        client = await connect(temporal_server.address)
        transport = httpx.ASGITransport(app=create_app(settings, temporal=client, pool=db))
        async with httpx.AsyncClient(transport=transport, base_url="http://isolator.test", timeout=60) as api:
            yield api, exporter
    finally:
        tracing.use_provider(None)
        provider.shutdown()


async def test_a_message_s_trace_goes_on_through_a_killed_worker_and_its_retried_activity(
    worker: WorkerProcess, traced_api: tuple[httpx.AsyncClient, InMemorySpanExporter], traces: OtlpTraces,
    repo: Path, tmp_path: Path, db: asyncpg.Pool,
) -> None:
    api, exporter = traced_api
    worker.extra_env.update(traces.environment(), AGENT_COMMAND=command("reporter"))
    worker.start()
    await register(api, repo)
    worker.stop()
    marker = tmp_path / "paused"
    worker.start(ISOLATOR_FAULT_PAUSE="send_reply:before", ISOLATOR_FAULT_MARKER=str(marker))

    response = await api.post("/test/message", json={"conversationId": "killed-1", "message": "add answer.txt"})
    assert response.status_code == 200, response.text
    await wait_for(marker, worker)

    def everything() -> list[SpanSeen]:
        return [seen(span) for span in exporter.get_finished_spans()] + list(traces.spans)

    # What the worker did up to the pause has reached the receiver: killed, it exports nothing more.
    await spans_when(everything, lambda spans: any(span.name == "StartActivity:send_reply" for span in spans))
    worker.kill()
    worker.start()

    def rooted(spans: list[SpanSeen], name: str) -> bool:
        return any(span.name == name and ancestry(spans, span)[0] == "POST /test/message" for span in spans)

    # Each span is exported when it ends: the agent's process before its activity.
    spans = await spans_when(everything, lambda spans: rooted(spans, "agent process"), 120)
    request = next(span for span in spans if span.name == "POST /test/message" and span.parent_id is None)
    trace = [span for span in spans if span.trace_id == request.trace_id]
    run_id = await db.fetchval("SELECT id FROM agent_runs WHERE conversation_id = 'killed-1'")
    assert await db.fetchval("SELECT trace_id FROM agent_runs WHERE id = $1", run_id) == request.trace_id
    retried = [span for span in trace if span.name == "RunActivity:send_reply"]
    assert retried, sorted(span.name for span in trace)
    for span in [*retried, next(span for span in trace if span.name == "agent process")]:
        path = ancestry(trace, span)
        assert path[0] == "POST /test/message" and "StartWorkflow:MessageWorkflow" in path, path
    agent_path = ancestry(trace, next(span for span in trace if span.name == "agent process"))
    assert agent_path[-3:] == ["StartActivity:run_agent", "RunActivity:run_agent", "agent process"], agent_path
    worker.stop()
