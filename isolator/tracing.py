"""One OpenTelemetry trace per message (docs/observability.md, "Traces"): the webhook's request, the
MessageWorkflow and its activities, the environment workflow's update, the agent's run and process, and
the results' push and pull request.

On when a process starts with OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) set,
exporting by OTLP over HTTP as the standard variables say. Off, nothing is imported past the
OpenTelemetry API, no interceptor runs, and each of the helpers below is a test of one global.

A run of the agent is not a step of the message that asked for it: its environment's workflow, which
lives across many messages, runs it later. So the message's trace travels with the run's request
(`RunRequest.trace`) and the workflow continues it (`continuing`) for the run and its results.
"""

from __future__ import annotations

import contextlib
import os
from typing import TYPE_CHECKING, Any, AsyncIterator, Iterator, Mapping

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from temporalio.client import Interceptor

_PROPAGATOR = TraceContextTextMapPropagator()
_ENDPOINTS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")

_provider: TracerProvider | None = None
_tracer: trace.Tracer | None = None


def start_tracing(service: str) -> bool:
    """Trace this process when the standard variables name an endpoint; True when on."""
    if not any(os.environ.get(name) for name in _ENDPOINTS) or os.environ.get("OTEL_SDK_DISABLED") == "true":
        return False
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    # OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over the process's own name.
    named = {} if os.environ.get("OTEL_SERVICE_NAME") else {SERVICE_NAME: service}
    provider = TracerProvider(resource=Resource.create(named))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    use_provider(provider)
    return True


def use_provider(provider: TracerProvider | None) -> None:
    """Trace with `provider` from now on (None: stop); the tests and the benchmark give theirs."""
    global _provider, _tracer
    _provider, _tracer = provider, provider.get_tracer("isolator") if provider is not None else None


def on() -> bool:
    return _tracer is not None


def client_interceptors() -> list[Interceptor]:
    """The Temporal client's: its workers take them too (the SDK adds a client's worker interceptors)."""
    if _tracer is None:
        return []
    from isolator.trace_interceptor import MessageTracing  # temporalio.contrib.opentelemetry: only when on

    return [MessageTracing(_tracer)]


def instrument_app(app: Any) -> None:
    """The API's requests as spans: a webhook's is the first of its message's trace. Health and metrics
    requests are left out: a prober would fill the traces."""
    if _provider is None:
        return
    from opentelemetry.instrumentation.asgi import OpenTelemetryMiddleware

    # The ASGI middleware, not FastAPIInstrumentor: that one names each span by trying the request against
    # every route of the app first (about 1 ms a request with the dashboard's); the route is known after.
    app.add_middleware(_NamedByRoute)
    app.add_middleware(OpenTelemetryMiddleware, tracer_provider=_provider, excluded_urls="healthz,readyz,metrics",
                       default_span_details=lambda scope: (scope.get("method") or "HTTP", {}),
                       exclude_spans=["receive", "send"])  # one span a request, not one per ASGI message


class _NamedByRoute:
    """Names the request's span `POST /api/runs/{run_id}` once routing has found its route: as the answer
    starts, before the span ends with it."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        current = trace.get_current_span()

        async def named(message: dict[str, Any]) -> None:
            route = getattr(scope.get("route"), "path", None)
            if message["type"] == "http.response.start" and route is not None:
                current.update_name(f"{scope['method']} {route}")
                current.set_attribute("http.route", route)
            await send(message)

        await self.app(scope, receive, named)


@contextlib.contextmanager
def span(name: str, **attributes: Any) -> Iterator[None]:
    """A span of this step, under the current one (an activity's); nothing when tracing is off."""
    if _tracer is None:
        yield
        return
    with _tracer.start_as_current_span(name, attributes={k: v for k, v in attributes.items() if v is not None}):
        yield


@contextlib.asynccontextmanager
async def async_span(name: str, **attributes: Any) -> AsyncIterator[None]:
    with span(name, **attributes):
        yield


def carrier() -> dict[str, str] | None:
    """The current span, to be continued elsewhere (W3C traceparent); None when there is none."""
    if _tracer is None:
        return None
    found: dict[str, str] = {}
    _PROPAGATOR.inject(found)
    return found or None


def current_trace_id() -> str | None:
    """The trace id of the current span, in hex as trace viewers show it; None outside a trace."""
    context = trace.get_current_span().get_span_context()
    return format(context.trace_id, "032x") if context.is_valid else None


@contextlib.contextmanager
def continuing(trace_carrier: Mapping[str, str] | None) -> Iterator[None]:
    """The steps started inside (activities, child workflows) continue the trace in `trace_carrier`.
    Safe in a workflow: it sets a context variable, and what it reads is in the workflow's history."""
    if not trace_carrier:
        yield
        return
    token = otel_context.attach(_PROPAGATOR.extract(dict(trace_carrier), context=otel_context.get_current()))
    evicted = False
    try:
        yield
    except GeneratorExit:  # the workflow evicted from the worker's cache, closed from another context
        evicted = True
        raise
    finally:
        if not evicted:
            otel_context.detach(token)
