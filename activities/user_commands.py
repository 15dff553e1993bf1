"""Running the user's programs (set-up and teardown commands, later the agent) on their behalf.

Each runs in a process group of its own, within a time limit, with its output kept to a bounded
tail, and with none of the service's secrets in its environment. On a timeout or a stop the group
gets SIGTERM, then SIGKILL after a grace period; whatever the program left running in its group is
ended with it, so nothing of a step outlives the step.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Awaitable, Callable

from pydantic import SecretStr

from isolator.settings import Settings

GRACE_SECONDS = 10.0
TAIL_LINES = 20
MAX_LINE = 2000  # characters kept of one line; a program that never prints a newline is cut here
_CHUNK = 1 << 16

# Variables the service holds for itself: its database, its API token, every webhook secret and bot token.
SECRETS = frozenset(
    {"DATABASE_URL", "PGPASSWORD"}
    | {str(field.validation_alias.choices[0])  # type: ignore[union-attr]
       for field in Settings.model_fields.values() if field.annotation in (SecretStr, SecretStr | None)}
)


def user_environment(extra: dict[str, str]) -> dict[str, str]:
    """The worker's environment without the service's secrets, plus `extra` (ISOLATOR_* and ports)."""
    return {**{name: value for name, value in os.environ.items() if name not in SECRETS}, **extra}


@dataclass
class Finished:
    exit_code: int | None  # None when it was stopped (timeout, cancellation)
    timed_out: bool
    seconds: float
    tail: list[str] = field(default_factory=list)  # the last lines of its output, standard error included


OnOutput = Callable[[str], Awaitable[None]]


async def run_user_command(
    argv: list[str], cwd: Path, env: dict[str, str], timeout_seconds: float, on_line: OnOutput | None = None,
) -> Finished:
    started = time.monotonic()
    process = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, env=env, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT, start_new_session=True,
    )
    tail: deque[str] = deque(maxlen=TAIL_LINES)
    try:
        await asyncio.wait_for(_read(process, tail, on_line), timeout_seconds)
        exit_code: int | None = await process.wait()
        timed_out = False
    except asyncio.TimeoutError:
        exit_code, timed_out = None, True
    finally:
        await stop_group(process)  # also what it left behind in its group after it exited
    return Finished(exit_code, timed_out, time.monotonic() - started, list(tail))


async def _read(process: asyncio.subprocess.Process, tail: deque[str], on_line: OnOutput | None) -> None:
    assert process.stdout is not None
    partial = ""
    while chunk := await process.stdout.read(_CHUNK):
        *lines, partial = (partial + chunk.decode(errors="replace")).split("\n")
        if len(partial) > MAX_LINE:  # no newline for a long while: keep its start, drop the rest
            lines.append(partial[:MAX_LINE] + " […]")
            partial = ""
        for line in lines:
            tail.append(line[:MAX_LINE])
            if on_line is not None:
                await on_line(line[:MAX_LINE])
    if partial:
        tail.append(partial[:MAX_LINE])


async def stop_group(process: asyncio.subprocess.Process) -> None:
    """SIGTERM to the process group, SIGKILL after the grace period; silent when it is gone already."""
    if not _signal_group(process.pid, signal.SIGTERM):
        await process.wait()
        return
    try:
        await asyncio.wait_for(_group_gone(process), GRACE_SECONDS)
    except asyncio.TimeoutError:
        _signal_group(process.pid, signal.SIGKILL)
    await process.wait()


async def _group_gone(process: asyncio.subprocess.Process) -> None:
    await process.wait()
    while _signal_group(process.pid, 0):
        await asyncio.sleep(0.05)


def _signal_group(group: int, signal_number: int) -> bool:
    try:
        os.killpg(group, signal_number)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:  # the group's leader is gone and its id taken by another user's group
        return False
