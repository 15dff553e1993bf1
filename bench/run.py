"""`make bench`: every benchmark case, printed as a table and written to bench/results/latest.json.

Run: .venv/bin/python -m bench.run [--quick] [--database-url URL --temporal-address HOST:PORT]
Without addresses it starts the embedded PostgreSQL and Temporal dev server, as `isolator dev`
does; either way it runs its own `isolator worker` and `isolator api` processes on queues of its own.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from bench import messages, sweep, webhooks
from bench.figures import Figure, as_json, print_table
from bench.repos import make_repository
from bench.stack import ROOT, running_stack
from tests.test_github_webhook import URL as GITHUB_REPOSITORY_URL


@dataclass
class Sizes:
    reuse_runs: int
    create_runs: int
    concurrency: int
    seconds: float
    webhook_runs: int
    sweep_sizes: tuple[int, int]


FULL = Sizes(reuse_runs=200, create_runs=30, concurrency=50, seconds=30, webhook_runs=200, sweep_sizes=(50, 500))
QUICK = Sizes(reuse_runs=20, create_runs=10, concurrency=10, seconds=5, webhook_runs=20, sweep_sizes=(10, 50))


async def run_cases(work: Path, sizes: Sizes, database_url: str | None, temporal_address: str | None) -> list[Figure]:
    repositories = work / "repositories"
    small = make_repository(repositories / "small", files=50, folders=1)
    large = make_repository(repositories / "large", files=5000, folders=200)
    figures: list[Figure] = []
    async with running_stack(work, database_url, temporal_address) as stack:
        # The small repository is also the one GitHub events are about.
        for body in ({"path": str(small), "url": GITHUB_REPOSITORY_URL}, {"path": str(large)}):
            (await stack.api.post("/api/codebases", json=body)).raise_for_status()
        for warm in range(3):  # first-use costs: connections, worker caches, git's own
            await messages.start_conversation(stack, f"warm-{warm}", small)
        steps = [
            ("reuse", lambda: messages.reuse(stack, small, sizes.reuse_runs)),
            ("create", lambda: messages.create(stack, "50 files", small, sizes.create_runs)),
            ("create", lambda: messages.create(stack, "5,000 files in 200 folders", large, sizes.create_runs)),
            ("throughput", lambda: messages.throughput(stack, small, sizes.concurrency, sizes.seconds)),
            ("webhooks", lambda: webhooks.github(stack, sizes.webhook_runs)),
            ("webhooks", lambda: webhooks.slack(stack, sizes.webhook_runs)),
            ("sweep", lambda: sweep.sweep(stack, repositories, sizes.sweep_sizes)),
        ]
        for name, step in steps:
            started = time.monotonic()
            figures += await step()
            print(f"  {name} done in {time.monotonic() - started:.0f} s", flush=True)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description="isolator benchmarks")
    parser.add_argument("--quick", action="store_true", help="small samples, to check that the cases run")
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL"))
    parser.add_argument("--temporal-address", default=os.environ.get("BENCH_TEMPORAL_ADDRESS"))
    arguments = parser.parse_args()
    sizes = QUICK if arguments.quick else FULL
    command = "make bench" + (" BENCH_ARGS=--quick" if arguments.quick else "")
    print(f"isolator benchmarks ({command}), {os.cpu_count()} cores, Python {platform.python_version()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="isolator-bench-") as scratch:
        figures = asyncio.run(run_cases(Path(scratch), sizes, arguments.database_url, arguments.temporal_address))
    print()
    print_table(figures)
    results = ROOT / "bench" / "results"
    results.mkdir(exist_ok=True)
    report = {"command": command, "when": datetime.now(timezone.utc).isoformat(timespec="seconds"),
              "cores": os.cpu_count(), "sizes": vars(sizes), "figures": as_json(figures)}
    (results / "latest.json").write_text(json.dumps(report, indent=2) + "\n")
    print("\nwritten: bench/results/latest.json")


if __name__ == "__main__":
    main()
