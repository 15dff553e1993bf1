"""What the fake model APIs share: a local HTTP server that answers each request with the next step of
a script, in its API's own format (workers/fake_model/anthropic.py; the tests' OpenAI fakes too), and
records every request for the tests to read.

A script is a list of steps: a text reply, a tool call (write a file, run a command), or an HTTP
error with its headers. Once the script is used up, every request gets the text `DEFAULT_TEXT`, unless
a subclass reads its answer from the request (workers/fake_model/scripted.py). A step may also hold the
reply back for a while (a silent agent).
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Self

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from workers.serving import ApiServer

DEFAULT_TEXT = "All done."


@dataclass
class Step:
    kind: str  # "text", "write", "run", "tool", "error"
    text: str = ""  # the reply's text; the file's content
    path: str = ""  # the file to write (relative to the worktree)
    command: str = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: dict[str, Any] = field(default_factory=dict)
    tool_input: dict[str, Any] = field(default_factory=dict)  # a "tool" step's call (its tool: `path`)
    delay: float = 0.0  # seconds before the reply starts
    input_tokens: int = 1000
    output_tokens: int = 50


def text(reply: str, **options: Any) -> Step:
    return Step("text", text=reply, **options)


def write(path: str, content: str, **options: Any) -> Step:
    return Step("write", text=content, path=path, **options)


def run(command: str, **options: Any) -> Step:
    return Step("run", command=command, **options)


def tool(name: str, given: dict[str, Any], **options: Any) -> Step:
    """A call of any tool by name (Claude Code's AskUserQuestion, ExitPlanMode)."""
    return Step("tool", path=name, tool_input=given, **options)


def error(status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> Step:
    return Step("error", status=status, body=body, headers=headers or {})


@dataclass
class Call:
    """A request to the model: its path, headers and JSON body."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]
    at: float = 0.0  # when it arrived (time.time())

    def text(self) -> str:
        return json.dumps(self.body)


class FakeModelApi:
    """Subclasses answer POST requests on `path` from `script`, in the API's own format."""

    path = ""
    keeps_calls = True  # the tests read every request; a server a person runs for hours keeps none

    def __init__(self) -> None:
        self.script: list[Step] = []
        self.calls: list[Call] = []
        self.url = ""
        self.called = asyncio.Event()
        self._server: ApiServer | None = None
        self._task: asyncio.Task[None] | None = None

    def then(self, *steps: Step) -> FakeModelApi:
        self.script.extend(steps)
        return self

    def next_step(self, body: dict[str, Any]) -> Step:
        if self.script:
            return self.script.pop(0)
        return text(DEFAULT_TEXT)

    async def _handle(self, request: Request) -> Response:
        arrived = time.time()
        body = json.loads(await request.body() or b"{}")
        if self.keeps_calls:
            self.calls.append(Call(request.url.path, {k.lower(): v for k, v in request.headers.items()}, body, arrived))
        self.called.set()
        if request.url.path != self.path:
            return JSONResponse({"error": {"message": f"no fake route for {request.url.path}"}}, status_code=404)
        step = self.next_step(body)
        if step.delay:
            await asyncio.sleep(step.delay)
        if step.kind == "error":
            return JSONResponse(step.body, status_code=step.status, headers=step.headers)
        if not body.get("stream"):
            return JSONResponse(self.whole(step, body))
        return StreamingResponse(self._sse(step, body), media_type="text/event-stream")

    async def _sse(self, step: Step, body: dict[str, Any]) -> AsyncIterator[bytes]:
        for name, data in self.events(step, body):
            yield f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()

    def events(self, step: Step, body: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        raise NotImplementedError

    def whole(self, step: Step, body: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    async def start(self, port: int = 0) -> str:
        """Listening on loopback, at `port` (0: one the kernel picks); its base URL."""
        app = Starlette(routes=[Route("/{path:path}", self._handle, methods=["GET", "POST"])])
        sock = socket.socket()
        sock.bind(("127.0.0.1", port))
        self._server = ApiServer(uvicorn.Config(app, log_level="warning", lifespan="off"))
        self._task = asyncio.create_task(self._server.serve(sockets=[sock]))
        while not self._server.started:
            await asyncio.sleep(0.01)
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        return self.url

    async def stop(self) -> None:
        if self._server is not None and self._task is not None:
            self._server.should_exit = True
            await self._task

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.stop()
