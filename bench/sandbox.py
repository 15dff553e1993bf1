"""The sandbox's cost: a run of a no-op agent (`true`, the message on its standard input) through
`run_user_program`, in the sandbox with its limits and unconfined without, alternating, in a real
worktree of a 50-file repository. Everything the walls add lies there: the run's git view, the
allow-list view, bubblewrap and its PID namespace, the run's cgroup, the check of the branch
afterwards. Target (issue 27, again in "Walls, second round"): at most 15 ms more at p50."""

from __future__ import annotations

import logging
import os
import statistics
import time
from pathlib import Path

from activities.sandbox import bubblewrap, limits
from activities.sandbox.user_programs import run_user_program
from bench.figures import Figure, verdict
from bench.repos import git, make_repository
from isolator.settings import load_settings

TARGET_MS = 15.0


async def overhead(trees: Path, runs: int) -> list[Figure]:
    root = trees / "sandbox"
    repository = make_repository(root / "repository", files=50, folders=1)
    worktree = root / "data" / "worktrees" / "repository" / "thread-bench"
    git("worktree", "add", "-q", "-b", "thread-bench", str(worktree), cwd=repository)
    modes = {mode: load_settings(data_dir=root / "data", sandbox=mode, database_url="unused") for mode in ("on", "off")}
    samples: dict[str, list[float]] = {"on": [], "off": []}
    logging.getLogger(bubblewrap.__name__).setLevel(logging.ERROR)  # SANDBOX=off's warning, once per switch

    async def ignore(chunk: bytes) -> None:
        pass

    limited = limits.configure(modes["on"])
    for number in range(runs * 2 + 4):  # the first two of each: warm-up, not counted
        mode = "on" if number % 2 == 0 else "off"
        bubblewrap.configure(modes[mode])
        limits._current = limited if mode == "on" else None  # unconfined: no cgroup either, as before the walls
        started = time.perf_counter()
        finished = await run_user_program(["true"], worktree, dict(os.environ), 60, on_output=ignore,
                                          stdin=b"hello")
        elapsed = (time.perf_counter() - started) * 1000
        assert finished.exit_code == 0, finished
        if number >= 4:
            samples[mode].append(elapsed)
    inside, outside = statistics.median(samples["on"]), statistics.median(samples["off"])
    more = inside - outside
    return [Figure("sandbox overhead (no-op agent)", f"p50 {inside:.1f} ms in the sandbox, {more:+.1f} ms",
                   f"p50 {outside:.1f} ms unconfined (n={runs} each, alternating)", verdict(more <= TARGET_MS),
                   {"sandboxed_p50_ms": round(inside, 1), "unconfined_p50_ms": round(outside, 1),
                    "more_ms": round(more, 1), "runs": runs, "target_ms": TARGET_MS})]
