"""Reading traces in the tests: spans from the in-memory exporter of this process, or from the OTLP
receiver the worker processes export to (tests/fakes/otlp_traces.py), as one shape."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Callable, Iterable

from opentelemetry.sdk.trace import ReadableSpan


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
