"""Traces in the tests: the service traced in this process (fixtures `exporter` and `traced`, the
SDK's in-memory exporter), and its spans, or those the worker processes export to the OTLP receiver
(tests/fakes/otlp_traces.py), read as one shape."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import AsyncIterator, Callable, Iterable, Iterator

import asyncpg
import httpx
import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from api.app import create_app
from isolator import tracing
from isolator.payloads import connect
from isolator.settings import Settings
from tests.conftest import Stack
from workers.temporal_server import TemporalDevServer
from workers.worker import running_workers


@pytest.fixture
def exporter() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.use_provider(provider)
    try:
        yield exporter
    finally:
        tracing.use_provider(None)
        provider.shutdown()


@pytest.fixture
async def traced(exporter: InMemorySpanExporter, settings: Settings, db: asyncpg.Pool,
                 temporal_server: TemporalDevServer, tmp_path: Path) -> AsyncIterator[Stack]:
    """The service as `isolator api` and `isolator worker` run it with OTEL_EXPORTER_OTLP_ENDPOINT set."""
    client = await connect(temporal_server.address)  # with the tracing interceptor, as tracing is on
    app = create_app(settings, temporal=client, pool=db)
    async with running_workers(client, db, settings):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://isolator.test", timeout=60) as api:
            yield Stack(api=api, settings=settings, db=db, temporal=client, tmp_path=tmp_path)


@dataclass(frozen=True)
class SpanSeen:
    name: str
    trace_id: str
    span_id: str
    parent_id: str | None
    attributes: dict[str, object] = field(default_factory=dict, compare=False, hash=False)


def seen(span: ReadableSpan) -> SpanSeen:
    assert span.context is not None
    return SpanSeen(span.name, format(span.context.trace_id, "032x"), format(span.context.span_id, "016x"),
                    format(span.parent.span_id, "016x") if span.parent is not None else None,
                    dict(span.attributes or {}))


def one_trace(spans: Iterable[SpanSeen], trace_id: str) -> list[SpanSeen]:
    return [span for span in spans if span.trace_id == trace_id]


def broken_links(trace: list[SpanSeen]) -> list[str]:
    """The spans whose parent is not in the trace, but its root (the only span with no parent)."""
    ids = {span.span_id for span in trace}
    roots = [span.name for span in trace if span.parent_id is None]
    return ([f"{len(roots)} roots: {roots}"] if len(roots) != 1 else []) + [
        f"{span.name} (parent {span.parent_id} missing)" for span in trace
        if span.parent_id is not None and span.parent_id not in ids]


def ancestry(trace: list[SpanSeen], span: SpanSeen) -> list[str]:
    """The names from the root down to `span`."""
    by_id = {item.span_id: item for item in trace}
    names = [span.name]
    while span.parent_id is not None and span.parent_id in by_id:
        span = by_id[span.parent_id]
        names.append(span.name)
    return names[::-1]


async def spans_when(read: Callable[[], list[SpanSeen]], ready: Callable[[list[SpanSeen]], bool],
                     seconds: float = 60) -> list[SpanSeen]:
    for _ in range(int(seconds * 20)):
        spans = read()
        if ready(spans):
            return spans
        await asyncio.sleep(0.05)
    raise AssertionError(f"spans: {sorted(span.name for span in read())}")
