"""The egress proxy: the only way out of a sandbox with SANDBOX_NETWORK=egress (the default).

The sandbox has a network namespace of its own with nothing but a loopback of its own, so no address
of the host (its loopback, where the API, Temporal and PostgreSQL listen, included) can be reached
from it. Its first program, the bridge (egress_bridge.pl), listens on that loopback on PROXY_PORT and
on each loopback port the operator allowed, and pipes every connection to a Unix socket of this
proxy, whose folder is bound into the sandbox. The proxy, outside, reads the request (`CONNECT
host:port`, or a plain-http request in absolute form), resolves the host, applies the allow-list
(isolator/egress_rules.py), and connects to the very address it checked: a second lookup could be
answered differently (DNS rebinding). A refusal is a 403 to the program, a log line naming the
host, so that an operator sees what to allow, and a `Refusal` handed to whoever listens for its run
(the agent's run says it in its conversation: activities/runs/refusals.py). The proxy lives as long as its run.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import tempfile
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from isolator import metrics
from isolator.egress_rules import Entry, Verdict, decide

log = logging.getLogger(__name__)

PROXY_PORT = 3128
INSIDE = Path("/tmp/.isolator-egress")  # where the sockets' folder is bound in the sandbox
BRIDGE = (Path(__file__).with_name("egress_bridge.pl")).read_text()
HEAD_LIMIT = 64 * 1024
LOOKUP_SECONDS = 10.0
CONNECT_SECONDS = 30.0
NO_PROXY = "localhost,127.0.0.1,::1"  # loopback stays in the sandbox: the bridge serves the allowed ports there


@dataclass(frozen=True)
class Refusal:
    host: str
    port: int
    reason: str  # the allow-list's words: "not on the allow-list"


# Who hears of a run's refusals besides the log: set by the run, for its own task, before its program starts.
refusals_heard_by: ContextVar[Callable[[Refusal], None] | None] = ContextVar("refusals_heard_by", default=None)


@dataclass
class Egress:
    """One run's proxy: its sockets' folder, and what the sandbox needs to use it."""
    folder: Path
    entries: tuple[Entry, ...]
    label: str  # the run's worktree, for the log
    routes: list[tuple[int, str]] = field(default_factory=list)  # (port inside, socket's name)
    servers: list[asyncio.AbstractServer] = field(default_factory=list)
    connections: set[asyncio.Task[None]] = field(default_factory=set)
    # Its run's listener, read when the proxy opens, in the run's own task (its connections' tasks are not).
    listener: Callable[[Refusal], None] | None = field(default_factory=refusals_heard_by.get)

    def wrap(self, argv: list[str]) -> list[str]:
        """`argv`, started by the bridge."""
        routes = [word for port, name in self.routes for word in (str(port), str(INSIDE / name))]
        return ["perl", "-e", BRIDGE, *routes, "--", *argv]

    @property
    def environment(self) -> dict[str, str]:
        proxy = f"http://127.0.0.1:{PROXY_PORT}"
        return {"HTTP_PROXY": proxy, "HTTPS_PROXY": proxy, "http_proxy": proxy, "https_proxy": proxy,
                "NO_PROXY": NO_PROXY, "no_proxy": NO_PROXY}

    async def close(self) -> None:
        for server in self.servers:
            server.close()
        for task in list(self.connections):
            task.cancel()
        await asyncio.gather(*self.connections, return_exceptions=True)


async def open_egress(entries: tuple[Entry, ...], scratch: Path, label: str) -> Egress:
    """The run's proxy, listening on Unix sockets in a new folder of `scratch`."""
    egress = Egress(Path(tempfile.mkdtemp(prefix="egress-", dir=scratch)), entries, label)
    try:
        await _listen(egress, PROXY_PORT, "proxy.sock", _proxy_connection)
        # A program without capabilities cannot listen below 1024: such a port is reached through the proxy only.
        mirrored = {entry.loopback_port for entry in entries if entry.loopback_port and entry.loopback_port >= 1024}
        for port in sorted(mirrored - {PROXY_PORT}):
            await _listen(egress, port, f"port-{port}.sock", _loopback_connection(port))
    except BaseException:
        await egress.close()
        raise
    return egress


Handler = Callable[[Egress, asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def _listen(egress: Egress, port: int, name: str, handler: Handler) -> None:
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        egress.connections.add(task)
        try:
            await handler(egress, reader, writer)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass
        finally:
            egress.connections.discard(task)
            writer.close()

    server = await asyncio.start_unix_server(serve, path=str(egress.folder / name), limit=HEAD_LIMIT)
    egress.servers.append(server)
    egress.routes.append((port, name))


def _loopback_connection(port: int) -> Handler:
    async def connect(egress: Egress, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream = await _reach(egress, "127.0.0.1", port, writer)
        if upstream is not None:
            await _pipe_both(reader, writer, *upstream)
    return connect


async def _proxy_connection(egress: Egress, reader: asyncio.StreamReader,
                                  writer: asyncio.StreamWriter) -> None:
    head = await reader.readuntil(b"\r\n\r\n")
    request_line, _, headers = head.partition(b"\r\n")
    method, target, version = request_line.decode("latin-1").split(" ", 2)
    if method == "CONNECT":
        host, _, port_text = target.rpartition(":")
        host, port = host.strip("[]"), int(port_text)
    else:
        url = urlsplit(target)
        if url.scheme != "http" or not url.hostname:
            await _answer(writer, 400, "Bad Request", "a proxy request names an absolute http:// URL\n")
            return
        host, port = url.hostname, url.port or 80
    upstream = await _reach(egress, host, port, writer)
    if upstream is None:
        return
    up_reader, up_writer = upstream
    if method == "CONNECT":
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
    else:
        url = urlsplit(target)
        path = (url.path or "/") + (f"?{url.query}" if url.query else "")
        up_writer.write(f"{method} {path} {version}\r\n".encode("latin-1") + _forwarded_headers(headers))
    await _pipe_both(reader, writer, up_reader, up_writer)


def _forwarded_headers(headers: bytes) -> bytes:
    """The request's headers without the proxy's own, with `Connection: close`: the next request on
    this connection could name another host, which the proxy would not have checked."""
    kept = [line for line in headers.split(b"\r\n") if line and not line.lower().startswith(
        (b"proxy-", b"connection:", b"keep-alive:"))]
    return b"\r\n".join([*kept, b"Connection: close", b"", b""])


async def _reach(egress: Egress, host: str, port: int,
                 client: asyncio.StreamWriter) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
    """The connection to `host:port` if the allow-list lets it through; else the refusal, answered and logged."""
    verdict = await _verdict(egress.entries, host, port)
    if verdict.address is None:
        log.warning("sandbox egress refused %s:%d (run in %s): %s; an operator can allow it in "
                    "SANDBOX_ALLOWED_HOSTS", host, port, egress.label, verdict.reason)
        metrics.EGRESS_REFUSALS.labels(metrics.egress_reason(verdict.reason)).inc()
        if egress.listener is not None:
            egress.listener(Refusal(host, port, verdict.reason))
        await _answer(client, 403, "Forbidden", f"isolator's sandbox refused {host}:{port}: {verdict.reason}. "
                      "An operator can allow it with SANDBOX_ALLOWED_HOSTS.\n")
        return None
    try:
        return await asyncio.wait_for(asyncio.open_connection(verdict.address, port), CONNECT_SECONDS)
    except (OSError, asyncio.TimeoutError) as error:
        await _answer(client, 502, "Bad Gateway", f"{host}:{port} could not be reached: {error}\n")
        return None


async def _verdict(entries: tuple[Entry, ...], host: str, port: int) -> Verdict:
    host = host.lower().rstrip(".")
    if not any(entry.names(host, port) for entry in entries):
        return Verdict(None, "not on the allow-list")  # no lookup of names nobody allowed
    try:
        found = await asyncio.wait_for(asyncio.get_running_loop().getaddrinfo(
            host, port, type=socket.SOCK_STREAM), LOOKUP_SECONDS)
    except (OSError, asyncio.TimeoutError) as error:
        return Verdict(None, f"the name could not be looked up ({error})")
    return decide(entries, host, port, [str(info[4][0]) for info in found])


async def _answer(writer: asyncio.StreamWriter, status: int, reason: str, text: str) -> None:
    body = text.encode()
    writer.write(f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
                 f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
    with contextlib.suppress(OSError):
        await writer.drain()


async def _pipe_both(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                     up_reader: asyncio.StreamReader, up_writer: asyncio.StreamWriter) -> None:
    try:
        await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
    finally:
        up_writer.close()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(1 << 16):
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except OSError:
        pass
