"""An npm registry on 127.0.0.1 serving one package, as the npm registry serves it: its packument
(`GET /<name>`, what `npm install <name>` resolves a version with; `npm ci` from a complete lockfile
never asks for it) and its tarball (`GET /<name>/-/<name>-<version>.tgz`). It runs in a thread of the
test's process and records the path of every request, so a test can tell what `npm ci` fetched.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import tarfile
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    tarball: bytes  # a .tgz as `npm pack` makes it: every file under `package/`

    @property
    def integrity(self) -> str:
        """The Subresource Integrity string npm checks the tarball against (lockfile and packument)."""
        return "sha512-" + base64.b64encode(hashlib.sha512(self.tarball).digest()).decode()

    @property
    def tarball_path(self) -> str:
        return f"/{self.name}/-/{self.name}-{self.version}.tgz"


def packed(name: str, version: str, files: dict[str, str]) -> Package:
    """A package of `files` (path -> text) and its own package.json."""
    contents = {"package.json": json.dumps({"name": name, "version": version}), **files}
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path, text in contents.items():
            data = text.encode()
            member = tarfile.TarInfo(f"package/{path}")
            member.size, member.mode = len(data), 0o644
            archive.addfile(member, io.BytesIO(data))
    return Package(name, version, buffer.getvalue())


class NpmRegistry:
    def __init__(self, package: Package) -> None:
        self.package = package
        self.requested: list[str] = []  # the path of every request, in order
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """As NPM_CONFIG_REGISTRY names a registry: with its trailing slash."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/"

    @property
    def tarball_url(self) -> str:
        return self.url.rstrip("/") + self.package.tarball_path

    def start(self) -> str:
        self._thread.start()
        return self.url

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def packument(self) -> dict:
        package = self.package
        return {"name": package.name, "dist-tags": {"latest": package.version},
                "versions": {package.version: {"name": package.name, "version": package.version,
                                               "dist": {"tarball": self.tarball_url,
                                                        "integrity": package.integrity}}}}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        registry = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                # Its path, whether the request names it alone or in a whole URL (as through a proxy).
                path = urlsplit(self.path).path
                registry.requested.append(path)
                if path == registry.package.tarball_path:
                    self._answer(200, "application/octet-stream", registry.package.tarball)
                elif path == f"/{registry.package.name}":
                    self._answer(200, "application/json", json.dumps(registry.packument()).encode())
                else:
                    self._answer(404, "application/json", b'{"error": "not found"}')

            def _answer(self, status: int, content_type: str, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler
