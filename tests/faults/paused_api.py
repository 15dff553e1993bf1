"""The API process of the fault tests: `isolator api`, plus a pause in a webhook request.

Run as `python -m tests.faults.paused_api --port N`. `ISOLATOR_FAULT_API_PAUSE` picks the point:
`before-start` (the request's body read, nothing started yet) or `after-start` (its workflow started,
the answer not yet sent). There every `POST /webhooks/...` stops for good, after touching the file
ISOLATOR_FAULT_MARKER, so that a test can kill the process at that point. Without the variable it is
`isolator api` as it ships: the pause lives here, never in the production path.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from pathlib import Path
from typing import Any, Awaitable, Callable

import uvicorn

from api.app import create_app
from isolator.settings import load_settings

Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class PausedWebhooks:
    def __init__(self, app: Any, point: str, marker: Path) -> None:
        self.app, self.point, self.marker = app, point, marker

    async def __call__(self, scope: Message, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or not scope["path"].startswith("/webhooks/"):
            await self.app(scope, receive, send)
            return
        if self.point == "before-start":
            while (await receive()).get("more_body"):
                pass
            await self._stop_here()

        async def answer_never(message: Message) -> None:
            if message["type"] == "http.response.start":
                await self._stop_here()
            await send(message)

        await self.app(scope, receive, answer_never)

    async def _stop_here(self) -> None:
        self.marker.write_text(f"{self.point}\n")
        await asyncio.Event().wait()  # until the test kills this process


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    port = parser.parse_args().port
    app: Any = create_app(load_settings())
    point = os.environ.get("ISOLATOR_FAULT_API_PAUSE")
    if point:
        if point not in ("before-start", "after-start") or "ISOLATOR_FAULT_MARKER" not in os.environ:
            raise SystemExit("ISOLATOR_FAULT_API_PAUSE is before-start or after-start, with ISOLATOR_FAULT_MARKER set")
        app = PausedWebhooks(app, point, Path(os.environ["ISOLATOR_FAULT_MARKER"]))
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main()
