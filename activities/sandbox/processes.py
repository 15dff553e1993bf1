"""A sandboxed run's processes, seen from outside: bubblewrap leads the run's process group, and
the program's processes live in a PID namespace of their own (activities/sandbox/bubblewrap.py)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal


class Watch:
    """A sandbox's first process, as bubblewrap reports it (`--info-fd`): the namespace lives as
    long as it does, and once it is gone (or a zombie), so is every process of the run. Read only
    when needed (at the run's end, or a stop), never on the way of a run's start.

    `gated`: bubblewrap makes the sandbox, then holds the program (`--block-fd`) until `open_gate`,
    so that what must be done before the program runs overlaps the sandbox's making."""

    def __init__(self, argv: list[str], gated: bool = False) -> None:
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        self._gate_read, self._gate = os.pipe() if gated else (None, None)
        gate = ["--block-fd", str(self._gate_read)] if gated else []
        self.argv = [argv[0], "--info-fd", str(self._write), *gate, *argv[1:]]
        self.pass_fds = (self._write,) + ((self._gate_read,) if self._gate_read is not None else ())
        self._data = b""
        self._first: int | None = None

    def started(self) -> None:
        os.close(self._write)
        if self._gate_read is not None:
            os.close(self._gate_read)
            self._gate_read = None

    def open_gate(self) -> None:
        """The held program starts. A sandbox already gone (bubblewrap ended as its worker was
        stopped) reads nothing: its run ends as any run whose sandbox ended."""
        if self._gate is not None:
            with contextlib.suppress(BrokenPipeError):
                os.write(self._gate, b"x")
            os.close(self._gate)
            self._gate = None

    async def first(self) -> int | None:
        """The first process's id; bubblewrap writes it as soon as it has made the namespace."""
        for _ in range(500):
            if self._first is not None:
                break
            try:
                chunk = os.read(self._read, 4096)
            except BlockingIOError:
                await asyncio.sleep(0.01)
                continue
            self._data += chunk
            try:
                self._first = int(json.loads(self._data)["child-pid"])
            except (ValueError, KeyError, TypeError):
                if not chunk:  # bubblewrap ended without saying: it made no namespace
                    break
        return self._first

    def close(self) -> None:
        os.close(self._read)
        if self._gate is not None:
            os.close(self._gate)
            self._gate = None

    async def ended(self, group: int) -> None:
        """Waits until no process of the run is left (bubblewrap itself has ended). Bubblewrap
        killed before it said its first process's id may leave that one a moment longer, ending
        the namespace: the group itself is watched then."""
        first = await self.first()
        pause = 0.001
        while _alive_in(first, group) if first is not None else live_members(group):
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.05)


def _alive_in(pid: int, group: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
    except OSError:
        return False
    return fields[0] != b"Z" and int(fields[2]) == group


def signal_inside(group: int, signal_number: int) -> bool:
    """Signal every live process of the sandboxed program's group but bubblewrap itself (its
    leader): a SIGTERM to bubblewrap would end the sandbox at once, leaving the program no grace to
    save its work. Returns whether any was found."""
    found = False
    for pid in live_members(group):
        if pid != group:
            try:
                os.kill(pid, signal_number)
                found = True
            except (ProcessLookupError, PermissionError):
                pass
    return found


def live_members(group: int) -> list[int]:
    """The processes of a process group that still run (zombies run nothing)."""
    members = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == group and fields[0] != b"Z":
            members.append(int(entry.name))
    return members


async def brief_output(argv: list[str], seconds: float, errors_too: bool = False) -> tuple[int, bytes] | None:
    """A short program of the service's own (`npm config get`, an agent's `--version`): its exit code
    and its output (standard error too, with `errors_too`); None when it cannot start or outlasts
    `seconds`. It runs in a process group of its own, ended whole on the timeout, so nothing it
    started outlives the question."""
    try:
        process = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT if errors_too else asyncio.subprocess.DEVNULL, start_new_session=True)
    except OSError:
        return None
    try:
        output, _ = await asyncio.wait_for(process.communicate(), seconds)
    except asyncio.TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        await process.wait()
        return None
    assert process.returncode is not None
    return process.returncode, output
