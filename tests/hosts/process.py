"""One forked process of a test cluster (tests/hosts/cluster.py): a host's worker or an API, started, killed
(SIGKILL), stopped (SIGTERM) and started again at will, with its log kept per start."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from tests.faults.forked import ForkedProcess, start_forked

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Process:
    """One forked process of the cluster (a host's worker, or an API), started, killed and restarted at will."""

    name: str
    program: str
    env: dict[str, str]
    logs: Path
    args: list[str] = field(default_factory=list)
    process: ForkedProcess | None = None
    starts: int = 0

    def start(self, **extra: str) -> None:
        """Started again with the same environment, plus `extra` for this start only."""
        assert not self.alive, f"{self.name} runs already"
        self.starts += 1
        log = self.logs / f"{self.name}-{self.starts}.log"
        self.process = start_forked(self.program, self.args, {**self.env, **extra}, log, ROOT)

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL to its whole process group: no shutdown, as when a machine loses power."""
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def terminate(self) -> None:
        """SIGTERM, as a deploy or systemd stops it; returns at once (`wait_ended` waits for the exit)."""
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGTERM)

    async def wait_ended(self, seconds: float = 60) -> int:
        assert self.process is not None
        for _ in range(int(seconds * 20)):
            if self.process.poll() is not None:
                return self.process.wait()
            await asyncio.sleep(0.05)
        raise AssertionError(f"{self.name} did not end within {seconds} s:\n{self.log_text()[-3000:]}")

    def stop(self) -> None:
        """At the end of a test: SIGTERM, then SIGKILL after 30 s."""
        if self.alive:
            self.terminate()
            try:
                self.process.wait(timeout=30)  # type: ignore[union-attr]
            except subprocess.TimeoutExpired:
                self.kill()

    def log_text(self) -> str:
        return "\n".join(path.read_text(errors="replace") for path in sorted(self.logs.glob(f"{self.name}-*.log")))
