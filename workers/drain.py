"""`isolator worker --drain`: this host's running workers stop taking work and end once their agent runs
have finished (up to WORKER_DRAIN_SECONDS, then those are interrupted), as SIGTERM makes them do.

The workers are found by their rows in `service_processes` (activities/hosts/presence.py): the live
ones of ISOLATOR_HOST on this machine. Each gets SIGTERM; the command returns once every one has ended,
so a rolling restart starts the next host's drain only when this host's worker is gone
(docs/operations.md, "Drain and rolling restart").
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import time

import asyncpg

from activities.hosts.presence import SILENT_AFTER_SECONDS
from isolator.settings import Settings

# After the grace, the runs still going are interrupted and the worker leaves: a few seconds more.
_LEAVING_SECONDS = 60.0


async def drain_workers(settings: Settings, say: object = print) -> int:
    """SIGTERM to this host's live workers on this machine; waits for them to end. Exit code: 0 drained
    (or none ran), 1 one of them was still running past the grace and its leaving time."""
    assert settings.database_url and callable(say)
    connection = await asyncpg.connect(settings.database_url)
    try:
        rows = await connection.fetch(
            """SELECT pid FROM service_processes WHERE kind = 'worker' AND host = $1 AND machine = $2
               AND stopped_at IS NULL AND last_seen > now() - make_interval(secs => $3)""",
            settings.host, socket.gethostname(), SILENT_AFTER_SECONDS)
    finally:
        await connection.close()
    pids = [row["pid"] for row in rows if _running(row["pid"])]
    if not pids:
        say(f"no worker of {settings.host} runs on this machine")
        return 0
    for pid in pids:
        os.kill(pid, signal.SIGTERM)
    say(f"draining {settings.host} (worker pid {', '.join(map(str, pids))}): it takes no new work; its agent runs "
        f"finish within {settings.worker_drain_seconds:g} s (WORKER_DRAIN_SECONDS); what waits stays queued for "
        "the host's next worker")
    deadline = time.monotonic() + settings.worker_drain_seconds + _LEAVING_SECONDS
    while any(_running(pid) for pid in pids):
        if time.monotonic() > deadline:
            say(f"{settings.host}'s worker is still running past its drain: look at its log")
            return 1
        await asyncio.sleep(0.2)
    say(f"{settings.host} drained: its worker has ended")
    return 0


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: running, but not ours to stop
        return True
    return True
