"""The fault tests' processes (the worker, the API, Telegram's poller), forked rather than started: they
start them about a hundred times, and each fresh interpreter spends some 2 s of CPU importing the
service. A fork server (multiprocessing's `forkserver`) imports tests/faults/paused_worker.py,
tests/faults/paused_api.py and tests/faults/paused_poller.py once, with no thread running yet, and forks
each start from there: the same program as `python -m <module> <args>`, in a session of its own, with
its own environment and log."""

from __future__ import annotations

import importlib
import multiprocessing
import os
import subprocess
import sys
import time
from multiprocessing.process import BaseProcess
from pathlib import Path

PROGRAMS = ["tests.faults.paused_worker", "tests.faults.paused_api", "tests.faults.paused_poller",
            "tests.hosts.api_program"]  # the last: `isolator api` as it ships, for tests/hosts
_CONTEXT = multiprocessing.get_context("forkserver")
_CONTEXT.set_forkserver_preload(PROGRAMS)


def start_forked(program: str, args: list[str], env: dict[str, str], log: Path, cwd: Path) -> "ForkedProcess":
    """`python -m program *args`, forked; once this returns, it leads its own process group."""
    assert program in PROGRAMS, program
    process = _CONTEXT.Process(target=_run, args=(program, args, env, str(log), str(cwd)), daemon=True)
    process.start()
    while _group_of(process.pid) != process.pid and process.exitcode is None:
        time.sleep(0.001)
    return ForkedProcess(process, program)


def _group_of(pid: int | None) -> int | None:
    try:
        return os.getpgid(pid) if pid is not None else None
    except ProcessLookupError:
        return None


def _run(program: str, args: list[str], env: dict[str, str], log: str, cwd: str) -> None:
    os.setsid()  # its own process group, as `start_new_session`: killed as one
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    sys.argv = [program, *args]
    output = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(output, 1)
    os.dup2(output, 2)
    os.close(output)
    importlib.import_module(program).main()  # imported already, in the fork server


class ForkedProcess:
    """The forked process, with what the tests use of subprocess.Popen."""

    def __init__(self, process: BaseProcess, program: str) -> None:
        self._process, self._program = process, program

    @property
    def pid(self) -> int:
        assert self._process.pid is not None
        return self._process.pid

    @property
    def returncode(self) -> int | None:
        return self._process.exitcode

    def poll(self) -> int | None:
        return self._process.exitcode

    def wait(self, timeout: float | None = None) -> int:
        self._process.join(timeout)
        if self._process.exitcode is None:
            raise subprocess.TimeoutExpired(self._program, timeout or 0)
        return self._process.exitcode
