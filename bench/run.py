"""`make bench`: every benchmark case, printed as a table and written to bench/results/latest.json.

Run: .venv/bin/python -m bench.run [--quick] [--trees-on-disk] [--database-url URL --temporal-address HOST:PORT]
Without addresses it starts the embedded PostgreSQL and Temporal dev server, as `isolator dev`
does; either way it runs its own `isolator worker` and `isolator api` processes on queues of its own.

The git repositories and every worktree (the service's and the raw ones it is compared with) go on
a tmpfs when the machine has one: a disk writing back hundreds of thousands of new files, or just
after deleting them, stalls `git worktree add` for seconds at a time, for minutes, and those stalls
fell on one side of a comparison or the other. PostgreSQL keeps its state on the disk, as in
production. `--trees-on-disk` puts the trees there too.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from bench import agents, approvals, dashboard, messages, pr_loop, ready, restore, sandbox, scale, sweep, webhooks
from bench import slack_socket
from bench import liveness as host_liveness
from bench import hosts as several_hosts
from bench import relocation
from bench import telegram as telegram_polling
from bench import metrics as metrics_cost
from bench import tracing as tracing_cost
from bench import warm as warm_pool
from bench import automations as automation_cases
from bench.installation_tokens import tokens as installation_tokens
from bench.figures import Figure, as_json, print_table
from bench.repos import make_repository
from bench.stack import ROOT, running_stack
from tests.platforms.github import URL as GITHUB_REPOSITORY_URL


@dataclass
class Sizes:
    reuse_runs: int
    create_runs: int
    concurrency: int
    seconds: float
    webhook_runs: int
    sweep_sizes: tuple[int, int]
    setup_runs: int
    include_megabytes: int
    include_runs: int
    hand_off_runs: int
    stream_lines: int
    many_conversations: int
    many_seconds: float
    scale_codebases: int
    scale_per_codebase: int
    status_environments: int
    status_runs: int
    rows: int
    rows_runs: int
    restore_runs: int
    sandbox_runs: int


FULL = Sizes(reuse_runs=200, create_runs=30, concurrency=50, seconds=30, webhook_runs=200, sweep_sizes=(50, 500),
             setup_runs=30, include_megabytes=200, include_runs=5, hand_off_runs=100, stream_lines=40,
             many_conversations=50, many_seconds=2.0, scale_codebases=50, scale_per_codebase=100,
             status_environments=1000, status_runs=50, rows=10_000, rows_runs=200, restore_runs=20,
             sandbox_runs=30)
QUICK = Sizes(reuse_runs=20, create_runs=10, concurrency=10, seconds=5, webhook_runs=20, sweep_sizes=(10, 50),
              setup_runs=5, include_megabytes=20, include_runs=3, hand_off_runs=10, stream_lines=10,
              many_conversations=12, many_seconds=1.0, scale_codebases=4, scale_per_codebase=25,
              status_environments=100, status_runs=10, rows=1_000, rows_runs=20, restore_runs=5,
              sandbox_runs=10)


TMPFS = Path("/dev/shm")
TMPFS_ROOM = 4 * 2**30  # the trees of a full run take about 1.5 GiB there


def tmpfs_usable() -> bool:
    return TMPFS.is_dir() and os.access(TMPFS, os.W_OK) and shutil.disk_usage(TMPFS).free >= TMPFS_ROOM


async def run_cases(work: Path, trees: Path, sizes: Sizes, database_url: str | None,
                    temporal_address: str | None, only: str | None = None) -> list[Figure]:
    repositories = trees / "repositories"
    small = make_repository(repositories / "small", files=50, folders=1)
    large = make_repository(repositories / "large", files=5000, folders=200)
    with_agent = make_repository(repositories / "with-agent", files=50, folders=1)
    real_cli = make_repository(repositories / "real-cli", files=50, folders=1)
    loop = make_repository(repositories / "loop", files=50, folders=1)
    fix_ci = make_repository(repositories / "fix-ci", files=50, folders=1)
    asking = approvals.ask_before_touch(make_repository(repositories / "asking", files=50, folders=1))
    figures: list[Figure] = []
    async with running_stack(work, trees, database_url, temporal_address) as stack:
        # The small repository is also the one GitHub events are about.
        for body in ({"path": str(small), "url": GITHUB_REPOSITORY_URL}, {"path": str(large)}):
            (await stack.api.post("/api/codebases", json=body)).raise_for_status()
        agent_codebase = (await stack.api.post("/api/codebases", json={"path": str(with_agent)})).json()["id"]
        real_cli_codebase = (await stack.api.post("/api/codebases", json={"path": str(real_cli)})).json()["id"]
        asking_codebase = (await stack.api.post("/api/codebases", json={"path": str(asking)})).json()["id"]
        for warm in range(3):  # first-use costs: connections, worker caches, git's own
            await messages.start_conversation(stack, f"warm-{warm}", small)
        steps = [
            ("reuse", lambda: messages.reuse(stack, small, sizes.reuse_runs)),
            ("create", lambda: messages.create(stack, "50 files", small, sizes.create_runs)),
            ("create", lambda: messages.create(stack, "5,000 files in 200 folders", large, sizes.create_runs)),
            ("throughput", lambda: messages.throughput(stack, small, sizes.concurrency, sizes.seconds)),
            ("webhooks", lambda: webhooks.github(stack, sizes.webhook_runs)),
            ("webhooks", lambda: webhooks.slack(stack, sizes.webhook_runs)),
            ("slack socket", lambda: slack_socket.socket_against_webhook(stack, sizes.webhook_runs)),
            ("telegram polling", lambda: telegram_polling.polling_against_webhook(stack, max(20, sizes.webhook_runs // 4))),
            ("sweep", lambda: sweep.sweep(stack, repositories, sizes.sweep_sizes)),
            ("installation tokens", lambda: installation_tokens(500)),
            ("set-up", lambda: ready.setup_overhead(stack, repositories, sizes.setup_runs)),
            ("warm pool", lambda: warm_pool.warm_create(stack, repositories, sizes.setup_runs)),
            ("warm pool", lambda: warm_pool.empty_pool_create(stack, repositories, sizes.create_runs)),
            ("throughput with the pool refilling", lambda: warm_pool.throughput_refilling(
                stack, repositories, small, sizes.concurrency, sizes.seconds)),
            ("include copy", lambda: ready.include_copy(trees, sizes.include_runs, sizes.include_megabytes)),
            ("agent hand-off", lambda: agents.hand_off(stack, agent_codebase, with_agent, small, sizes.hand_off_runs)),
            ("agent streaming", lambda: agents.streaming(stack, agent_codebase, with_agent, sizes.stream_lines)),
            ("agent hand-off to a real CLI", lambda: agents.real_cli_hand_off(stack, real_cli_codebase, real_cli,
                                                                          max(5, sizes.hand_off_runs // 4))),
            ("approvals", lambda: approvals.allow_to_resume(stack, asking_codebase, asking,
                                                            max(5, sizes.hand_off_runs // 4))),
            ("pull-request loop", lambda: pr_loop.fix_hand_off(stack, loop, max(5, sizes.hand_off_runs // 4))),
            ("fix-ci on a PR's first comment", lambda: pr_loop.fix_ci_first_comment(
                stack, fix_ci, max(5, sizes.hand_off_runs // 4))),
            ("restore", lambda: restore.restore_against_add(work, trees, sizes.restore_runs)),
            ("sandbox", lambda: sandbox.overhead(trees, sizes.sandbox_runs)),
            ("agent runs", lambda: agents.many_runs(stack, agent_codebase, with_agent, sizes.many_conversations,
                                                    sizes.many_seconds)),
            ("host liveness", lambda: host_liveness.liveness(stack, sizes.reuse_runs)),
            ("several hosts", lambda: several_hosts.spread_runs(stack, min(40, sizes.many_conversations))),
            ("several hosts", lambda: several_hosts.healthy_host_while_another_dies(stack, sizes.reuse_runs // 4)),
            ("moving and rebuilding", lambda: relocation.move_and_rebuild(stack, 5000 if sizes is FULL else 500)),
            ("dashboard", lambda: dashboard.codebase_page(stack, sizes.status_environments, sizes.status_runs)),
            ("dashboard live", lambda: dashboard.line_to_page(stack, agent_codebase, with_agent, sizes.stream_lines)),
            ("tracing", lambda: tracing_cost.tracing_cost(stack, sizes.reuse_runs, sizes.concurrency, sizes.seconds)),
            ("metrics", lambda: metrics_cost.scrape_with_environments(stack, sizes.status_environments,
                                                                      sizes.status_runs)),
            ("metrics", lambda: metrics_cost.throughput_cost(stack, sizes.concurrency, sizes.seconds)),
            ("automations", lambda: automation_cases.firing_against_chat(
                stack, make_repository(repositories / "automations", files=50, folders=1), sizes.create_runs)),
            ("automations defined", lambda: automation_cases.reuse_with_automations(
                stack, make_repository(repositories / "automations-reuse", files=50, folders=1), sizes.reuse_runs)),
            # Last: they leave thousands of environments behind (the rows case deletes its own).
            ("reuse with 10,000 rows", lambda: scale.reuse_with_rows(stack, small, sizes.rows, sizes.rows_runs)),
            ("classification", lambda: scale.classification(stack, trees, sizes.scale_codebases,
                                                            sizes.scale_per_codebase)),
            ("status at scale", lambda: scale.status_at_scale(stack, trees, sizes.status_environments,
                                                              sizes.status_runs)),
        ]
        wanted = [part.strip() for part in only.split(",")] if only else []
        for name, step in steps:
            if wanted and not any(part in name for part in wanted):
                continue
            started = time.monotonic()
            measured = await step()
            figures += measured
            # Each case's figures as soon as it ends: a later case that fails loses none of them.
            print(f"  {name} done in {time.monotonic() - started:.0f} s: "
                  + "; ".join(f"{figure.case.strip()}: {figure.value}" for figure in measured), flush=True)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description="isolator benchmarks")
    parser.add_argument("--quick", action="store_true", help="small samples, to check that the cases run")
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL"))
    parser.add_argument("--temporal-address", default=os.environ.get("BENCH_TEMPORAL_ADDRESS"))
    parser.add_argument("--only", help="run only the cases whose name contains this, or one of these "
                                       "comma-separated words (e.g. `agent`, `classification,status at scale`)")
    parser.add_argument("--trees-on-disk", action="store_true",
                        help="git repositories and worktrees on the disk, not on a tmpfs")
    arguments = parser.parse_args()
    sizes = QUICK if arguments.quick else FULL
    flags = [flag for flag, given in (("--quick", arguments.quick), ("--trees-on-disk", arguments.trees_on_disk),
                                      (f"--only {arguments.only}", arguments.only)) if given]
    command = "make bench" + (f" BENCH_ARGS='{' '.join(flags)}'" if flags else "")
    on_tmpfs = not arguments.trees_on_disk and tmpfs_usable()
    print(f"isolator benchmarks ({command}), {os.cpu_count()} cores, Python {platform.python_version()}; "
          f"git trees on {'a tmpfs' if on_tmpfs else 'the disk'}", flush=True)
    with tempfile.TemporaryDirectory(prefix="isolator-bench-") as scratch, \
            tempfile.TemporaryDirectory(prefix="isolator-bench-trees-", dir=TMPFS if on_tmpfs else scratch) as trees:
        figures = asyncio.run(run_cases(Path(scratch), Path(trees), sizes, arguments.database_url,
                                        arguments.temporal_address, arguments.only))
    print()
    print_table(figures)
    results = ROOT / "bench" / "results"
    results.mkdir(exist_ok=True)
    report = {"command": command, "when": datetime.now(timezone.utc).isoformat(timespec="seconds"),
              "cores": os.cpu_count(), "sizes": vars(sizes),
              "git_trees": "tmpfs" if on_tmpfs else "disk", "figures": as_json(figures)}
    (results / "latest.json").write_text(json.dumps(report, indent=2) + "\n")
    print("\nwritten: bench/results/latest.json")


if __name__ == "__main__":
    main()
