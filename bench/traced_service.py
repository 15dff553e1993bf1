"""`python -m bench.traced_service worker` / `... api --port N`: `isolator worker` or `isolator api` with
tracing on, as OTEL_EXPORTER_OTLP_ENDPOINT turns it on, its spans batched to the SDK's in-memory
exporter instead of a collector (emptied as it fills): the cost of tracing without a network's."""

from __future__ import annotations

import asyncio
import logging
import sys
from typing import Sequence

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from isolator import tracing
from isolator.settings import load_settings
from workers.log_format import configure_logging


class _Kept(InMemorySpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if len(self.get_finished_spans()) > 10_000:
            self.clear()
        return super().export(spans)


def main() -> None:
    settings = load_settings()
    configure_logging(settings.log_format, logging.WARNING, settings.host)
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(_Kept()))
    trace.set_tracer_provider(provider)
    tracing.use_provider(provider)
    if sys.argv[1] == "worker":
        from workers.processes import run_worker

        asyncio.run(run_worker(settings))
    else:
        from workers.api_process import run_api

        asyncio.run(run_api(settings, "127.0.0.1", int(sys.argv[3])))


if __name__ == "__main__":
    main()
