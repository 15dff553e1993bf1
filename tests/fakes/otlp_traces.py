"""A tiny OTLP/HTTP trace receiver (POST /v1/traces, protobuf as the SDK's exporter sends it): the
processes a test starts export their spans here, and the test reads them back as SpanSeen."""

from __future__ import annotations

import gzip

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.fakes.recording_server import Recorded, RecordingServer
from tests.traces import SpanSeen


class OtlpTraces(RecordingServer):
    def __init__(self) -> None:
        super().__init__()
        self.spans: list[SpanSeen] = []
        self.route("POST", "/v1/traces", self._export)

    def _export(self, request: Recorded) -> tuple[int, dict]:
        body = gzip.decompress(request.body) if request.headers.get("content-encoding") == "gzip" else request.body
        export = ExportTraceServiceRequest.FromString(body)
        for resource in export.resource_spans:
            for scope in resource.scope_spans:
                for span in scope.spans:
                    attributes = {item.key: _value(item.value) for item in span.attributes}
                    self.spans.append(SpanSeen(span.name, span.trace_id.hex(), span.span_id.hex(),
                                               span.parent_span_id.hex() or None, attributes))
        return 200, {}

    def environment(self) -> dict[str, str]:
        """The standard variables that send a process's spans here, at once (not every 5 s)."""
        return {"OTEL_EXPORTER_OTLP_ENDPOINT": self.url, "OTEL_BSP_SCHEDULE_DELAY": "50"}


def _value(value: object) -> object:
    kind = value.WhichOneof("value")  # type: ignore[attr-defined]
    return getattr(value, kind) if kind else None
