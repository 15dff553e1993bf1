"""The Temporal SDK's own metrics (its workers' polls, task latencies, slots, the client's requests): its
runtime's Prometheus exporter, on a loopback port of this process's choosing, read back by our /metrics so
that one scrape gives both (docs/observability.md).

`install` sets the process's default runtime: it must run before the process's first Temporal client."""

from __future__ import annotations

import asyncio
import socket

from temporalio.runtime import PrometheusConfig, Runtime, TelemetryConfig

_endpoint: str | None = None  # where this process's runtime exports, once installed


def prometheus_runtime(address: str) -> Runtime:
    """A runtime whose metrics Prometheus can read at `address` (host:port), named as Prometheus names them:
    durations in seconds, with their unit and `_total` on counters."""
    return Runtime(telemetry=TelemetryConfig(metrics=PrometheusConfig(
        bind_address=address, counters_total_suffix=True, unit_suffix=True, durations_as_seconds=True)))


def free_loopback_address() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{probe.getsockname()[1]}"


def install() -> str:
    """The process's default runtime exports its metrics on a free loopback port; its address (once per process)."""
    global _endpoint
    if _endpoint is None:
        address = free_loopback_address()
        Runtime.set_default(prometheus_runtime(address), error_if_already_set=False)
        _endpoint = address
    return _endpoint


def use(address: str | None) -> None:
    """Read Temporal's metrics from `address` (a runtime made by the caller, as the tests make theirs)."""
    global _endpoint
    _endpoint = address


async def temporal_text() -> bytes:
    """The exporter's text, or nothing when this process exports none (or it cannot be read now). A plain
    HTTP/1.0 request on loopback: a client session per scrape cost more than the read."""
    if _endpoint is None:
        return b""
    host, _, port = _endpoint.rpartition(":")
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, int(port)), 5)
        try:
            writer.write(f"GET /metrics HTTP/1.0\r\nHost: {_endpoint}\r\n\r\n".encode())
            answer = await asyncio.wait_for(reader.read(), 5)
        finally:
            writer.close()
    except (OSError, asyncio.TimeoutError):
        return b""
    head, _, body = answer.partition(b"\r\n\r\n")
    return body if head.split(b" ", 2)[1:2] == [b"200"] else b""
