"""A git server over smart HTTP, as GitHub serves a public repository: anyone may fetch, a push needs
the token (HTTP Basic, `x-access-token:<token>`). It runs git's own `git http-backend` on bare
repositories in a folder, in a thread of the test's process.

When an authorized push arrives, every process's argument list is read while the push is in flight,
so a test can show the token appears in none of them.
"""

from __future__ import annotations

import base64
import os
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable


class GitHttpServer:
    def __init__(self, root: Path, token: str, accepts: Callable[[str], bool] | None = None) -> None:
        """`accepts`: which tokens a push may carry (a GitHub App's installation tokens change); `token` alone
        otherwise."""
        self.root, self.token = root, token
        self.accepts = accepts or (lambda given: given == token)
        self.refused_pushes = 0
        self.authorized_pushes = 0
        self.argv_during_pushes: list[str] = []  # every process's argument list, read during each push
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> str:
        self._thread.start()
        return self.url

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._serve()

            def do_POST(self) -> None:
                self._serve()

            def log_message(self, format: str, *args: object) -> None:
                pass

            def _serve(self) -> None:
                path, _, query = self.path.partition("?")
                pushing = path.endswith("/git-receive-pack") or "service=git-receive-pack" in query
                if pushing and not server._authorized(self.headers.get("Authorization")):
                    server.refused_pushes += 1
                    self.send_response(401)
                    self.send_header("WWW-Authenticate", 'Basic realm="GitHub"')
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                if pushing and path.endswith("/git-receive-pack"):
                    server.authorized_pushes += 1
                    server.argv_during_pushes.extend(_all_argument_lists())
                body = self._body()
                environment = {
                    "PATH": os.environ.get("PATH", ""), "GIT_PROJECT_ROOT": str(server.root),
                    "GIT_HTTP_EXPORT_ALL": "1", "PATH_INFO": path, "QUERY_STRING": query,
                    "REQUEST_METHOD": self.command, "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                    "CONTENT_LENGTH": str(len(body)), "REMOTE_ADDR": "127.0.0.1",
                    "REMOTE_USER": "x-access-token" if pushing else "",
                }
                if self.headers.get("Content-Encoding"):
                    environment["HTTP_CONTENT_ENCODING"] = self.headers["Content-Encoding"]
                backend = subprocess.run(["git", "http-backend"], input=body, env=environment, capture_output=True)
                head, _, payload = backend.stdout.partition(b"\r\n\r\n")
                status, headers = 200, []
                for line in head.decode("latin-1").split("\r\n"):
                    name, _, value = line.partition(": ")
                    if name.lower() == "status":
                        status = int(value.split()[0])
                    elif name:
                        headers.append((name, value))
                self.send_response(status)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _body(self) -> bytes:
                if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                    chunks = []
                    while (size := int(self.rfile.readline().strip() or b"0", 16)) > 0:
                        chunks.append(self.rfile.read(size))
                        self.rfile.readline()
                    self.rfile.readline()
                    return b"".join(chunks)
                return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        return Handler

    def _authorized(self, header: str | None) -> bool:
        scheme, _, encoded = (header or "").partition(" ")
        try:
            user, _, password = base64.b64decode(encoded).decode().partition(":")
        except ValueError:
            return False
        return scheme == "Basic" and user == "x-access-token" and self.accepts(password)


def _all_argument_lists() -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                found.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
            except OSError:
                pass  # ended meanwhile
    return found
