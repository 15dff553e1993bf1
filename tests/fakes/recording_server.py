"""A small local HTTP server that records every request and answers from handlers.

The platform fakes (GitHub, Slack, Telegram) are built on it: the real SDKs are pointed at its
URL, and tests read back what the SDKs sent.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable
from urllib.parse import parse_qs

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from workers.serving import ApiServer


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    params: dict[str, str] = field(default_factory=dict)  # named groups of the matched route

    def json(self) -> Any:
        return json.loads(self.body or b"null")

    def form(self) -> dict[str, str]:
        return {key: values[0] for key, values in parse_qs(self.body.decode()).items()}

    def payload(self) -> dict[str, Any]:
        """The body as JSON or as a form, whichever the client sent."""
        if self.headers.get("content-type", "").startswith("application/json"):
            return self.json()
        return self.form()


Handler = Callable[[Recorded], Awaitable[tuple[int, Any]] | tuple[int, Any]]


class RecordingServer:
    """Routes are (method, path regex) -> handler returning (status, JSON body)."""

    def __init__(self) -> None:
        self.routes: list[tuple[str, re.Pattern[str], Handler]] = []
        self.requests: list[Recorded] = []
        self.url = ""
        self._server: uvicorn.Server | None = None
        self._task: asyncio.Task[None] | None = None

    def route(self, method: str, pattern: str, handler: Handler) -> None:
        self.routes.append((method.upper(), re.compile(pattern), handler))

    def received(self, method: str | None = None, path_pattern: str | None = None) -> list[Recorded]:
        return [
            request for request in self.requests
            if (method is None or request.method == method.upper())
            and (path_pattern is None or re.fullmatch(path_pattern, request.path))
        ]

    async def _handle(self, request: Request) -> Response:
        recorded = Recorded(
            method=request.method,
            path=request.url.path,
            query=parse_qs(request.url.query),
            headers={key.lower(): value for key, value in request.headers.items()},
            body=await request.body(),
        )
        self.requests.append(recorded)
        for method, pattern, handler in self.routes:
            match = pattern.fullmatch(recorded.path)
            if method == recorded.method and match:
                recorded.params = match.groupdict()
                answer = handler(recorded)
                answer = await answer if asyncio.iscoroutine(answer) else answer
                if isinstance(answer, Response):  # a handler's own answer (a redirect)
                    return answer
                status, body = answer
                return JSONResponse(body, status_code=status)
        return JSONResponse({"message": f"no fake route for {recorded.method} {recorded.path}"}, status_code=404)

    async def start(self) -> str:
        app = Starlette(routes=[Route("/{path:path}", self._handle, methods=["GET", "POST", "PUT", "PATCH", "DELETE"])])
        sock = socket.socket()
        # Answers go out at once: without it, a response written in two parts waits for the client's
        # delayed ACK (40 ms) on every request of a kept-alive connection, as no real API does.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        self._server = ApiServer(uvicorn.Config(app, log_level="warning", lifespan="off"))
        self._task = asyncio.create_task(self._server.serve(sockets=[sock]))
        while not self._server.started:
            await asyncio.sleep(0.01)
        self.url = f"http://127.0.0.1:{port}"
        return self.url

    async def stop(self) -> None:
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            await self._task
