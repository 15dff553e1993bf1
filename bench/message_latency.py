"""End-to-end latency of the create and reuse paths through `/test/message?wait=true`.

Starts `isolator dev` (embedded PostgreSQL and Temporal) in a temporary data dir, registers a
small repository, then times:
  create: a message to a new conversation (a worktree is made, recorded, and a reply logged);
  reuse:  a further message to a conversation that already has one (validated, silent).
Baselines measured in the same run, to read the figures against:
  git:     `git worktree add -b` + `remove` on the same repository, the floor of a create;
  healthz: a GET /healthz round trip, the floor of any HTTP call.

Run: .venv/bin/python bench/message_latency.py [--runs 30]
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
ISOLATOR = Path(sys.executable).parent / "isolator"
IDENTITY = ["-c", "user.name=Bench", "-c", "user.email=bench@example.invalid"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *IDENTITY, *args], cwd=cwd, check=True, capture_output=True)


def make_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git("init", "-q", "-b", "main", cwd=path)
    for number in range(50):
        (path / f"file{number}.txt").write_text(f"content {number}\n" * 20)
    git("add", ".", cwd=path)
    git("commit", "-q", "-m", "initial", cwd=path)
    return path


def timed(call) -> float:
    start = time.perf_counter()
    call()
    return (time.perf_counter() - start) * 1000


def summary(name: str, samples: list[float], baseline: float | None = None) -> str:
    median = statistics.median(samples)
    p90 = statistics.quantiles(samples, n=10)[-1] if len(samples) >= 10 else max(samples)
    ratio = f"  x{median / baseline:5.1f} of baseline" if baseline else ""
    return f"{name:<8} n={len(samples):<3} median {median:7.1f} ms  p90 {p90:7.1f} ms  min {min(samples):7.1f} ms{ratio}"


def wait_ready(api: httpx.Client, process: subprocess.Popen, deadline: float) -> None:
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"isolator dev exited early with {process.returncode}")
        try:
            if api.get("/readyz").status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise SystemExit("isolator dev did not become ready in time")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="samples per path (at least 20 for the note)")
    runs = parser.parse_args().runs

    with tempfile.TemporaryDirectory(prefix="isolator-bench-") as scratch:
        work = Path(scratch)
        repo = make_repo(work / "repos" / "project")
        port = free_port()
        env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
        # room for every conversation of the run: the limit is not what is measured
        env.update(ISOLATOR_DATA_DIR=str(work / "data"), MAX_WORKTREES_PER_CODEBASE=str(runs + 10))
        command = [str(ISOLATOR), "dev", "--api-port", str(port), "--temporal-port", str(free_port()),
                   "--ui-port", str(free_port())]
        log = (work / "dev.log").open("w")
        process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as api:
                wait_ready(api, process, time.monotonic() + 120)
                api.post("/api/codebases", json={"path": str(repo)}).raise_for_status()

                def say(conversation: str) -> dict:
                    response = api.post("/test/message", params={"wait": "true"},
                                        json={"conversationId": conversation, "message": "bench"})
                    response.raise_for_status()
                    return response.json()["result"]

                for warm in range(3):  # first-use costs: worker caches, connections, git's own
                    say(f"warm-{warm}")
                creates, reuses = [], []
                for run in range(runs):
                    creates.append(timed(lambda: say(f"create-{run}")))
                    assert say(f"create-{run}")["outcome"] == "reused"
                for _ in range(runs):
                    reuses.append(timed(lambda: say("create-0")))
                healthz = [timed(lambda: api.get("/healthz").raise_for_status()) for _ in range(runs)]

            git_add = []
            for run in range(runs):
                path = work / "raw" / f"b{run}"
                git_add.append(timed(lambda: git("worktree", "add", "-q", "-b", f"raw-{run}", str(path), cwd=repo)))
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=60)
            log.close()

    git_median = statistics.median(git_add)
    healthz_median = statistics.median(healthz)
    print(f"isolator message latency, {runs} runs per path, embedded stack (isolator dev)")
    print(summary("git", git_add))
    print(summary("healthz", healthz))
    print(summary("create", creates, git_median) + "  (baseline: git worktree add)")
    print(summary("reuse", reuses, healthz_median) + "  (baseline: GET /healthz)")


if __name__ == "__main__":
    main()
