"""Row 9: `isolator api` without API_TOKEN listens on the loopback address only and says so; any other
address is refused in one line naming API_TOKEN; and the API answers no client off loopback."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import uuid
from pathlib import Path
from typing import AsyncIterator

import httpx
import pytest

from api.app import create_app
from isolator.settings import Settings
from tests.conftest import Stack, free_port
from tests.dev_process import ISOLATOR

LISTEN = "0A"  # a TCP socket's state in /proc/net/tcp*


def api_env(settings: Settings, tmp_path: Path) -> dict[str, str]:
    ours = {field.validation_alias.choices[0] for field in Settings.model_fields.values()}
    env = {key: value for key, value in os.environ.items() if key not in ours}  # no API_TOKEN above all
    env.update(DATABASE_URL=settings.database_url or "", TEMPORAL_ADDRESS=settings.temporal_address,
               ISOLATOR_DATA_DIR=str(tmp_path / "data"), EAGER_START="false")
    return env


def listening_addresses(port: int) -> set[str]:
    """The local addresses (hex, as the kernel writes them) of the sockets listening on `port`."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, _, hex_port = local.partition(":")
            if state == LISTEN and int(hex_port, 16) == port:
                found.add(address)
    return found


@pytest.fixture
async def api_process(settings: Settings, tmp_path: Path) -> AsyncIterator[tuple[subprocess.Popen, Path, int]]:
    port, log = free_port(), tmp_path / "api.log"
    with log.open("wb") as output:
        process = subprocess.Popen([ISOLATOR, "api", "--port", str(port)], env=api_env(settings, tmp_path),
                                   stdout=output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True)
    try:
        yield process, log, port
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=60)


def test_another_address_without_api_token_is_refused_in_one_line(settings: Settings, tmp_path: Path) -> None:
    for address in ("0.0.0.0", "::", "192.0.2.10"):
        refused = subprocess.run([ISOLATOR, "api", "--host", address, "--port", str(free_port())],
                                 env=api_env(settings, tmp_path), capture_output=True, text=True, timeout=60)
        assert refused.returncode == 2, refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1 and "API_TOKEN" in refused.stderr, refused.stderr
        assert "Traceback" not in refused.stderr + refused.stdout


async def test_without_api_token_it_listens_on_loopback_only_and_says_so(
    api_process: tuple[subprocess.Popen, Path, int],
) -> None:
    process, log, port = api_process
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=5) as client:
        for _ in range(1200):  # up to 120 s on a loaded machine
            assert process.poll() is None, log.read_text()
            try:
                if (await client.get("/readyz")).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.1)
        else:
            raise AssertionError(f"the API never answered:\n{log.read_text()}")
    assert listening_addresses(port) == {"0100007F"}, "listening beyond 127.0.0.1"
    said = [line for line in log.read_text().splitlines() if "API_TOKEN is unset" in line]
    assert len(said) == 1 and "127.0.0.1" in said[0], log.read_text()


async def test_without_api_token_the_api_and_test_adapter_answer_loopback_clients_only(stack: Stack) -> None:
    app = create_app(stack.settings, temporal=stack.temporal, pool=stack.db)
    transport = httpx.ASGITransport(app=app, client=("203.0.113.9", 40000))
    async with httpx.AsyncClient(transport=transport, base_url="http://isolator.test") as remote:
        listed = await remote.get("/api/codebases")
        runs = await remote.get("/api/runs")
        deleted = await remote.delete(f"/api/codebases/{uuid.uuid4()}")
        posted = await remote.post("/test/message", json={"conversationId": "remote", "message": "hi"})
    for refused in (listed, runs, deleted, posted):
        assert refused.status_code == 403 and "API_TOKEN" in refused.json()["detail"], refused.text
    assert (await stack.api.get("/api/codebases")).status_code == 200, "loopback clients are served"
