"""Temporal's TracingInterceptor, with one change: an update or a signal is a step of the message that
sent it. The SDK's puts their spans under the workflow's own start, linked to the caller; an
EnvironmentWorkflow lives across many messages, so the environment's update would land in the trace
of the message that created the worktree. Here its span is the caller's child, in the caller's trace.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator, Mapping

from opentelemetry import context as otel_context
from opentelemetry.trace import SpanKind
from temporalio.api.common.v1 import Payload
from temporalio.contrib.opentelemetry import TracingInterceptor, TracingWorkflowInboundInterceptor
from temporalio.worker import HandleSignalInput, HandleUpdateInput, WorkflowInterceptorClassInput


class MessageTracing(TracingInterceptor):
    def workflow_interceptor_class(
        self, input: WorkflowInterceptorClassInput
    ) -> type[TracingWorkflowInboundInterceptor]:
        super().workflow_interceptor_class(input)  # registers the span function the workflow side calls
        return _CallerTracing


class _CallerTracing(TracingWorkflowInboundInterceptor):
    async def handle_signal(self, input: HandleSignalInput) -> None:
        with self._in_callers_trace(input.headers) as traced:
            if not traced:
                return await super().handle_signal(input)
            self._completed_span(f"HandleSignal:{input.signal}", kind=SpanKind.SERVER)
            return await self.next.handle_signal(input)

    def handle_update_validator(self, input: HandleUpdateInput) -> None:
        with self._in_callers_trace(input.headers) as traced:
            if not traced:
                return super().handle_update_validator(input)
            self._completed_span(f"ValidateUpdate:{input.update}", kind=SpanKind.SERVER)
            return self.next.handle_update_validator(input)

    async def handle_update_handler(self, input: HandleUpdateInput) -> Any:
        with self._in_callers_trace(input.headers) as traced:
            if not traced:
                return await super().handle_update_handler(input)
            self._completed_span(f"HandleUpdate:{input.update}", kind=SpanKind.SERVER)
            return await self.next.handle_update_handler(input)

    @contextlib.contextmanager
    def _in_callers_trace(self, headers: Mapping[str, Payload]) -> Iterator[bool]:
        """The caller's span as the current one, when the call carried it (True); else nothing (False)."""
        header = headers.get(self.header_key)
        carrier = self.payload_converter.from_payloads([header])[0] if header else None
        if not carrier:
            yield False
            return
        token = otel_context.attach(self._set_on_context(self.text_map_propagator.extract(carrier)))
        evicted = False
        try:
            yield True
        except GeneratorExit:  # the workflow evicted from the worker's cache, closed from another context
            evicted = True
            raise
        finally:
            if not evicted:
                otel_context.detach(token)
