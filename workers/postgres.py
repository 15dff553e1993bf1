"""Embedded PostgreSQL (pgserver) under the data dir, for when DATABASE_URL is unset."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg

DATABASE = "isolator"


@dataclass
class EmbeddedPostgres:
    server: Any  # pgserver.PostgresServer
    url: str

    async def stop(self) -> None:
        await asyncio.to_thread(self.server.cleanup)


def _start(pgdata: Path) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs warns when XDG_RUNTIME_DIR is unset
        import pgserver

    logging.getLogger("pgserver").setLevel(logging.WARNING)
    pgdata.parent.mkdir(parents=True, exist_ok=True)
    _forget_dead_handles(pgdata)
    return pgserver.get_server(pgdata, cleanup_mode="stop")


def _forget_dead_handles(pgdata: Path) -> None:
    """pgserver stops the server when its last user exits, counting users by the pids in this file.
    A process that was killed never removed its pid, and then no later run ever stopped the server."""
    handles = pgdata / ".handle_pids.json"
    try:
        pids = json.loads(handles.read_text())
    except (OSError, ValueError):
        return
    alive = [pid for pid in pids if _alive(pid)]
    if alive != pids:
        handles.write_text(json.dumps(alive))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


async def start_embedded_postgres(pgdata: Path) -> EmbeddedPostgres:
    """Start (or join) the server in `pgdata` and make sure the `isolator` database exists."""
    server = await asyncio.to_thread(_start, pgdata)
    admin = await asyncpg.connect(server.get_uri("postgres"))
    try:
        exists = await admin.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", DATABASE)
        if not exists:
            await admin.execute(f'CREATE DATABASE "{DATABASE}"')
    finally:
        await admin.close()
    return EmbeddedPostgres(server=server, url=server.get_uri(DATABASE))
