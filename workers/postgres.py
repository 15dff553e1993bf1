"""Embedded PostgreSQL (pgserver) under the data dir, for when DATABASE_URL is unset."""

from __future__ import annotations

import asyncio
import logging
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
    return pgserver.get_server(pgdata, cleanup_mode="stop")


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
