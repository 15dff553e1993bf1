"""The fault tests' worker, forked rather than started: they start it about a hundred times, and each
fresh interpreter spends some 2 s of CPU importing it. A fork server (multiprocessing's
`forkserver`) imports tests/faults/paused_worker.py once, with no thread running yet, and forks each
start from there: the same program as `python -m tests.faults.paused_worker`, in a session of its
own, with its own environment and log."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import time
from multiprocessing.process import BaseProcess
from pathlib import Path

_CONTEXT = multiprocessing.get_context("forkserver")
_CONTEXT.set_forkserver_preload(["tests.faults.paused_worker"])


def start_worker(env: dict[str, str], log: Path, cwd: Path) -> "ForkedWorker":
    process = _CONTEXT.Process(target=_run, args=(env, str(log), str(cwd)), daemon=True)
    process.start()
    while _group_of(process.pid) != process.pid and process.exitcode is None:  # as Popen's, once it returns
        time.sleep(0.001)
    return ForkedWorker(process)


def _group_of(pid: int | None) -> int | None:
    try:
        return os.getpgid(pid) if pid is not None else None
    except ProcessLookupError:
        return None


def _run(env: dict[str, str], log: str, cwd: str) -> None:
    os.setsid()  # its own process group, as `start_new_session`: killed as one
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    output = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(output, 1)
    os.dup2(output, 2)
    os.close(output)
    from tests.faults.paused_worker import main  # imported already, in the fork server

    main()


class ForkedWorker:
    """The forked process, with what the tests use of subprocess.Popen."""

    def __init__(self, process: BaseProcess) -> None:
        self._process = process

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
            raise subprocess.TimeoutExpired("tests.faults.paused_worker", timeout or 0)
        return self._process.exitcode
