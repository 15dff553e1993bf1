"""Running the API and the workers in one event loop until SIGINT, SIGTERM or SIGHUP."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from typing import Iterator

import uvicorn


class ApiServer(uvicorn.Server):
    """uvicorn without its own signal handling: the process owner decides when to stop."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def stop_on_signals(stop: asyncio.Event) -> None:
    loop = asyncio.get_running_loop()
    # SIGHUP too (terminal closed): its default action ends the process without any cleanup.
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(sig, stop.set)


async def serve_until(stop: asyncio.Event, server: ApiServer | None) -> None:
    """Serve the API (if any) until `stop` is set, then shut it down gracefully."""
    if server is None:
        await stop.wait()
        return
    serving = asyncio.create_task(_serve(server))
    stopping = asyncio.create_task(stop.wait())
    await asyncio.wait({serving, stopping}, return_when=asyncio.FIRST_COMPLETED)
    server.should_exit = True
    await serving
    stopping.cancel()
    if server.started is False and not stop.is_set():
        raise RuntimeError(f"the API server could not start on {server.config.host}:{server.config.port}")


async def _serve(server: ApiServer) -> None:
    try:
        await server.serve()
    except SystemExit:
        # uvicorn calls sys.exit() when it cannot bind its port. Let out of the task, SystemExit stops the
        # event loop and cancels every task at once, and the shutdown then hung forever, leaving Temporal and
        # PostgreSQL running. `server.started` stays False, so serve_until reports the failure instead.
        pass
