"""`isolator dev` run as a real subprocess for the tests: free ports, its environment, its process
tree, and a fixture that starts it and kills whatever it left at teardown."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from contextlib import suppress
from pathlib import Path
from typing import Iterator

import httpx
import pytest

from isolator.settings import Settings
from tests.conftest import free_port

ISOLATOR = str(Path(sys.executable).parent / "isolator")
READY_TIMEOUT = 180.0  # a fresh data dir runs initdb and migrations first; upper bounds for a loaded machine
STOP_TIMEOUT = 60.0
FLAGS = ("--api-port", "--temporal-port", "--ui-port")


def free_ports(count: int) -> list[int]:
    """Distinct free ports (tests/conftest.py free_port)."""
    ports: list[int] = []
    while len(ports) < count:
        ports.append(free_port(taken=ports))
    return ports


def port_is_free(port: int) -> bool:
    with socket.socket() as probe, suppress(OSError):
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # TIME_WAIT is not "taken"
        probe.bind(("127.0.0.1", port))
        return True
    return False


def dev_env(tmp_path: Path) -> dict[str, str]:
    """The caller's environment without any isolator setting (above all DATABASE_URL, so the embedded
    PostgreSQL is used, and API_TOKEN), plus folders under tmp."""
    ours = {field.validation_alias.choices[0] for field in Settings.model_fields.values()}
    env = {key: value for key, value in os.environ.items() if key not in ours}
    env.update(
        # --data-dir must win over this one; the tests check nothing lands here.
        ISOLATOR_DATA_DIR=str(tmp_path / "env-data-dir"),
        WORKTREE_BASE=str(tmp_path / "worktrees"),
        WORKSPACE_PATH=str(tmp_path / "workspace"),
    )
    return env


# --- processes, read from /proc (psutil is not a dependency of ours) ---------------------------

Proc = tuple[int, str]  # (pid, start time): a pid reused by an unrelated process is a different Proc


def _stat(pid: int) -> list[str] | None:
    with suppress(OSError):
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()  # [state, ppid, …, starttime at 19]
    return None


def proc(pid: int) -> Proc | None:
    fields = _stat(pid)
    return (pid, fields[19]) if fields else None


def is_running(process: Proc) -> bool:
    """Still there and not a zombie (a zombie has exited and only waits to be reaped)."""
    fields = _stat(process[0])
    return fields is not None and fields[19] == process[1] and fields[0] not in ("Z", "X")


def process_tree(root: int) -> set[Proc]:
    """`root` and all its descendants, now."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (fields := _stat(int(entry.name))):
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = set(), [root]
    while todo:
        pid = todo.pop()
        if (process := proc(pid)) and process not in found:
            found.add(process)
            todo.extend(children.get(pid, []))
    return found


def cmdline(pid: int) -> str:
    with suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    return ""


def command_lines_mentioning(text: str) -> list[str]:
    lines = (cmdline(int(entry.name)) for entry in Path("/proc").iterdir() if entry.name.isdigit())
    return [line for line in lines if text in line]


class Dev:
    """One `isolator dev` process, in its own session so that teardown can always kill it."""

    def __init__(self, tmp_path: Path, data_dir: Path, ports: list[int], env: dict[str, str] | None = None) -> None:
        self.tmp_path, self.data_dir, self.env = tmp_path, data_dir, env or {}
        self.ports, (self.api_port, self.temporal_port, self.ui_port) = ports, ports
        self.api = f"http://127.0.0.1:{self.api_port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, wait_ready: bool = True) -> "Dev":
        number = len(list(self.tmp_path.glob("dev-*.out")))
        self.out_path, self.err_path = self.tmp_path / f"dev-{number}.out", self.tmp_path / f"dev-{number}.err"
        args = [ISOLATOR, "dev", "--data-dir", str(self.data_dir)]
        args += [item for flag, port in zip(FLAGS, self.ports) for item in (flag, str(port))]
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.process = subprocess.Popen(
                args, env={**dev_env(self.tmp_path), **self.env}, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                start_new_session=True,
            )
        if wait_ready:
            self._wait_ready()
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            assert self.process is not None
            if self.process.poll() is not None:
                pytest.fail(f"isolator dev exited with {self.process.returncode}:\n{self.logs()}")
            try:
                if httpx.get(f"{self.api}/readyz", timeout=2).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        pytest.fail(f"isolator dev was not ready within {READY_TIMEOUT} s:\n{self.logs()}")

    def stdout(self) -> str:
        return self.out_path.read_text(errors="replace")

    def logs(self) -> str:
        return f"--- stdout\n{self.stdout()}--- stderr\n{self.err_path.read_text(errors='replace')[-4000:]}"

    def postmaster(self) -> Proc | None:
        """The embedded server daemonizes (own session, parent 1): find it by its pid file."""
        pgdata = self.data_dir / "postgres"
        try:
            pid = int((pgdata / "postmaster.pid").read_text().split()[0])
        except (FileNotFoundError, IndexError, ValueError):
            return None
        return proc(pid) if str(pgdata) in cmdline(pid) else None

    def stop(self, sig: signal.Signals) -> int:
        """Stop as a user would: a signal to the process, or Ctrl-C (SIGINT to its process group)."""
        assert self.process is not None
        if sig == signal.SIGINT:
            os.killpg(self.process.pid, sig)
        else:
            self.process.send_signal(sig)
        try:
            return self.process.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            pytest.fail(f"isolator dev did not stop within {STOP_TIMEOUT} s after {sig.name}:\n{self.logs()}")

    def kill(self) -> None:
        """Teardown, whatever happened: kill the process, its group, its descendants and PostgreSQL."""
        if self.process is None:
            return
        leftovers = process_tree(self.process.pid) if self.process.poll() is None else set()
        for pid, _ in leftovers:  # Temporal has a session of its own, so the group is not enough
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        if (postmaster := self.postmaster()) and is_running(postmaster):
            os.kill(postmaster[0], signal.SIGQUIT)  # immediate shutdown, backends included


@pytest.fixture
def start_dev(tmp_path: Path) -> Iterator:
    """`start_dev(data_dir, ports=None, env=None)` starts `isolator dev` (`env`: variables added to its
    environment) and waits for /readyz; all are killed at teardown."""
    started: list[Dev] = []

    def start(data_dir: Path, ports: list[int] | None = None, env: dict[str, str] | None = None) -> Dev:
        started.append(Dev(tmp_path, data_dir, ports or free_ports(3), env))  # before start(): a failed start is killed too
        return started[-1].start()

    yield start
    for dev in started:
        dev.kill()


def say(dev: Dev, conversation: str, text: str) -> dict:
    answer = httpx.post(
        f"{dev.api}/test/message", params={"wait": "true"},
        json={"conversationId": conversation, "message": text}, timeout=60,
    )
    assert answer.status_code == 200, answer.text
    return answer.json()
