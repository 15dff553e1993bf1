"""Stopping a user's program and all it started: SIGTERM first, SIGKILL after GRACE_SECONDS. In
the sandbox, bubblewrap leads the program's process group and is spared the SIGTERM, which would
end the sandbox at once and leave the program no grace to save its work."""

from __future__ import annotations

import asyncio
import os
import signal
from dataclasses import dataclass

from activities.sandbox.processes import Watch, signal_inside

GRACE_SECONDS = 10.0


@dataclass
class Stop:
    """The stop of one run: whatever is left of its group once it ended, or all of it on a timeout or a cancel."""

    process: asyncio.subprocess.Process
    watch: Watch | None  # the program runs in the sandbox, bubblewrap leads its group

    async def __call__(self) -> None:
        if self.watch is None:
            await stop_group(self.process)
        elif self.process.returncode is not None:  # the namespace ends with its first process
            await self.watch.ended(self.process.pid)
        else:
            await stop_sandbox(self.process, self.watch)


async def stop_group(process: asyncio.subprocess.Process) -> None:
    """SIGTERM to the process group, SIGKILL after the grace period; silent when it is gone already."""
    if not signal_group(process.pid, signal.SIGTERM):
        await process.wait()
        return
    try:
        await asyncio.wait_for(_group_gone(process), GRACE_SECONDS)
    except TimeoutError:
        signal_group(process.pid, signal.SIGKILL)
    await process.wait()


async def stop_sandbox(process: asyncio.subprocess.Process, watch: Watch) -> None:
    """SIGTERM to all in the sandbox but bubblewrap, whose SIGTERM would end it at once, leaving
    the program no grace to save its work; SIGKILL to the whole group after the grace period."""
    signal_inside(process.pid, signal.SIGTERM)
    try:
        await asyncio.wait_for(asyncio.gather(process.wait(), watch.ended(process.pid)), GRACE_SECONDS)
    except TimeoutError:
        signal_group(process.pid, signal.SIGKILL)
    await process.wait()
    await watch.ended(process.pid)


async def _group_gone(process: asyncio.subprocess.Process) -> None:
    await process.wait()
    while signal_group(process.pid, 0):
        await asyncio.sleep(0.05)


def signal_group(group: int, signal_number: int) -> bool:
    try:
        os.killpg(group, signal_number)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:  # the group's leader is gone and its id taken by another user's group
        return False
