"""A process's own row in `service_processes`: recorded at its start, refreshed while it runs, marked stopped
at a clean exit. The row's times are the database's clock, so machines whose clocks differ agree."""

from __future__ import annotations

import os
import shutil
import socket
import uuid
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import asyncpg

from isolator.fingerprint import agent_of, fingerprint_of
from isolator.settings import Settings

# A process refreshes its row this often; a host none of whose workers did for SILENT_AFTER_SECONDS is
# silent (five refreshes missed: a loaded machine's late one is not taken for a death).
PRESENCE_SECONDS = 1.0
SILENT_AFTER_SECONDS = 5.0
# Rows silent this long are removed by the next process that starts: the hosts page forgets a host then.
FORGOTTEN_AFTER = timedelta(days=1)


@dataclass(frozen=True)
class Presence:
    id: uuid.UUID
    kind: str  # worker or api
    folder: Path  # whose disk's room is recorded: the worktree base's


def disk_room(folder: Path) -> tuple[int, int] | None:
    """(free, total) bytes of the file system holding `folder` (or its nearest existing parent)."""
    for place in (folder, *folder.parents):
        try:
            usage = shutil.disk_usage(place)
        except OSError:
            continue
        return usage.free, usage.total
    return None


async def record_start(pool: asyncpg.Pool, settings: Settings, kind: str, runs_messages: bool) -> Presence:
    presence = Presence(uuid.uuid4(), kind, settings.worktree_base)
    room = disk_room(presence.folder) or (None, None)
    fingerprint = fingerprint_of(settings)
    async with pool.acquire() as connection, connection.transaction():
        await connection.execute(
            "DELETE FROM service_processes WHERE last_seen < now() - $1::interval", FORGOTTEN_AFTER)
        await connection.execute(
            """INSERT INTO service_processes (id, kind, host, machine, pid, fingerprint, settings_hashes, agent,
                                              runs_messages, disk_free_bytes, disk_total_bytes)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)""",
            presence.id, kind, settings.host, socket.gethostname(), os.getpid(), fingerprint.digest,
            fingerprint.parts, agent_of(settings), runs_messages, *room)
    return presence


async def record_alive(pool: asyncpg.Pool, presence: Presence) -> None:
    free, total = disk_room(presence.folder) or (None, None)
    await pool.execute(
        """UPDATE service_processes SET last_seen = now(), disk_free_bytes = coalesce($2, disk_free_bytes),
                  disk_total_bytes = coalesce($3, disk_total_bytes) WHERE id = $1""",
        presence.id, free, total)


async def record_stop(pool: asyncpg.Pool, presence: Presence) -> None:
    await pool.execute("UPDATE service_processes SET stopped_at = now(), last_seen = now() WHERE id = $1",
                       presence.id)
