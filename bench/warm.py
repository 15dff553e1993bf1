"""Warm worktrees (docs/warm.md): a new conversation with a set-up against a reuse, a create that finds
the pool empty against today's create, and today's throughput case while the pool refills."""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path

import asyncpg

from bench.baseline import WarmShapedBareWorkflow
from bench.figures import Figure, Latency, timed, verdict
from bench.messages import RAMP_SECONDS, WINDOW_SECONDS, _Load, _saturate, bare, say, start_conversation
from bench.repos import git, make_repository
from bench.stack import Stack

SLOW_SETUP = '[setup]\ncommands = ["sleep 2", "echo ready > setup-done.txt"]\ninputs = ["deps.lock"]\n'
# Fails before a claim (no branch yet), works after: the pool stays empty, the environments get set up.
WARM_FAILS = '[setup]\ncommands = ["test -n \\"$ISOLATOR_BRANCH\\""]\n'
FAST_SETUP = '[setup]\ncommands = ["echo ready > setup-done.txt"]\n'


def _with_config(path: Path, text: str, files: int = 5000, folders: int = 200) -> Path:
    repository = make_repository(path, files=files, folders=folders)
    (repository / ".isolator.toml").write_text(text)
    git("add", ".isolator.toml", cwd=repository)
    git("commit", "-q", "-m", "set-up", cwd=repository)
    return repository


async def _register(stack: Stack, repository: Path, warm: int) -> str:
    response = await stack.api.post("/api/codebases", json={"path": str(repository)})
    response.raise_for_status()
    codebase = response.json()["id"]
    (await stack.api.patch(f"/api/codebases/{codebase}", json={"warm_worktrees": warm})).raise_for_status()
    return codebase


async def _ready_rows(db: asyncpg.Connection, codebase: str) -> int:
    return await db.fetchval("SELECT count(*) FROM warm_worktrees WHERE codebase_id = $1::uuid AND state = 'ready'",
                             codebase)


async def _until_ready(db: asyncpg.Connection, environment_id: str) -> None:
    while (state := await db.fetchval("SELECT setup_state FROM isolation_environments WHERE id = $1::uuid",
                                      environment_id)) in ("none", "running"):
        await asyncio.sleep(0.002)
    assert state == "ready", state


async def warm_shaped_bare(stack: Stack) -> None:
    await stack.temporal.execute_workflow(WarmShapedBareWorkflow.run, id=f"bare-warm-{uuid.uuid4().hex}",
                                          task_queue=stack.baseline_queue)


async def warm_create(stack: Stack, repositories: Path, runs: int) -> list[Figure]:
    """5,000 files and a 2 s set-up, pool of 1: a new conversation's first message until its environment
    is ready (the pool refilled before each), against a reuse timed in the same run. Beside them, the
    floor Temporal alone sets: the two paths' steps as bare workflows doing nothing."""
    repository = _with_config(repositories / "warm-large", SLOW_SETUP)
    codebase = await _register(stack, repository, warm=1)
    db = await asyncpg.connect(stack.database_url)
    try:
        await say(stack, "warm-reuse", f"/clone {repository}")
        await say(stack, "warm-reuse")
        creates, reuses, warm_shaped, reuse_shaped = [], [], [], []
        for run in range(runs):
            while await _ready_rows(db, codebase) < 1:
                await asyncio.sleep(0.05)
            conversation = f"warm-new-{run}"
            await say(stack, conversation, f"/clone {repository}")

            async def first_message() -> None:
                result = await say(stack, conversation)
                assert result["outcome"] == "created", result
                await _until_ready(db, result["environmentId"])

            creates.append(await timed(first_message))
            reuses.append(await timed(lambda: say(stack, "warm-reuse")))
            warm_shaped.append(await timed(lambda: warm_shaped_bare(stack)))
            reuse_shaped.append(await timed(lambda: bare(stack)))
    finally:
        await db.close()
    create_figure, reuse_figure = Latency.of(creates), Latency.of(reuses)
    apart = create_figure.p50 - reuse_figure.p50
    warm_floor, reuse_floor = Latency.of(warm_shaped), Latency.of(reuse_shaped)
    floor = warm_floor.p50 - reuse_floor.p50
    return [
        Figure("warm create, 5,000 files, 2 s set-up, until ready", str(create_figure), f"reuse: {reuse_figure}",
               verdict(apart <= 30), {"latency": vars(create_figure), "baseline": vars(reuse_figure),
                                      "p50s_apart": round(apart, 1)}),
        Figure("  beyond a reuse (p50)", f"{apart:+.1f} ms (target <= +30)"),
        Figure("  Temporal's floor: its ten steps doing nothing, beyond a reuse's two (p50)", f"{floor:+.1f} ms",
               f"bare workflows from a client: {warm_floor} / {reuse_floor}",
               data={"warm_shaped": vars(warm_floor), "reuse_shaped": vars(reuse_floor), "p50s_apart": round(floor, 1)}),
    ]


async def empty_pool_create(stack: Stack, repositories: Path, runs: int) -> list[Figure]:
    """A create that finds the pool empty (its warm set-up fails) against a codebase without a pool,
    both 5,000 files, alternating."""
    empty = await _register(stack, _with_config(repositories / "warm-empty", WARM_FAILS), warm=1)
    cold_repository = _with_config(repositories / "warm-off", WARM_FAILS)
    await _register(stack, cold_repository, warm=0)
    db = await asyncpg.connect(stack.database_url)
    try:
        while not await db.fetchval("SELECT count(*) FROM warm_worktrees WHERE codebase_id = $1::uuid AND "
                                    "state = 'failed'", empty):
            await asyncio.sleep(0.05)
    finally:
        await db.close()
    misses, colds = [], []
    for run in range(runs):
        for repository, samples, name in ((repositories / "warm-empty", misses, "miss"),
                                          (cold_repository, colds, "cold")):
            conversation = f"warm-{name}-{run}"
            await say(stack, conversation, f"/clone {repository}")
            samples.append(await timed(lambda: say(stack, conversation)))
    miss_figure, cold_figure = Latency.of(misses), Latency.of(colds)
    ratio = miss_figure.p50 / cold_figure.p50
    return [
        Figure("create, 5,000 files, the pool empty", str(miss_figure), f"no pool: {cold_figure}",
               verdict(ratio <= 1.05), {"latency": vars(miss_figure), "baseline": vars(cold_figure),
                                        "ratio_p50": round(ratio, 2)}),
        Figure("  ratio to a create without a pool (p50)", f"x{ratio:.2f} (target <= 1.05)"),
    ]


# New conversations arrive one after another, with this pause between them, while the load runs: about one
# new conversation for every 50 reuse messages here. The pool's own work shows more the more often they
# come: for a 50-file repository a claim costs what the create it replaces does, and the refill repeats
# that create's git work and set-up (docs/warm.md, "Measuring it").
NEW_CONVERSATION_PAUSE = 2.0
LOAD_ORDER = ("today", "warm", "warm", "today")


async def throughput_refilling(stack: Stack, repositories: Path, repository: Path, concurrency: int,
                               seconds: float) -> list[Figure]:
    """Today's throughput case (reuse messages in `concurrency` conversations, counted in windows) while
    new conversations keep arriving: on a codebase with a pool of 2 (each claims a warm worktree and the
    pool refills in the background, during the count) against the same arrivals on a codebase without a
    pool (today's create). Only the reuse messages are counted, on both sides."""
    pooled = _with_config(repositories / "warm-load", FAST_SETUP, files=50, folders=1)
    codebase = await _register(stack, pooled, warm=2)
    today = _with_config(repositories / "cold-load", FAST_SETUP, files=50, folders=1)
    await _register(stack, today, warm=0)
    db = await asyncpg.connect(stack.database_url)
    try:
        # Its pool full, and no other pool (of the cases before) still making or moving a worktree.
        while await _ready_rows(db, codebase) < 2 or await db.fetchval(
                "SELECT count(*) FROM warm_worktrees WHERE state IN ('making', 'refreshing', 'removing')"):
            await asyncio.sleep(0.05)
    finally:
        await db.close()
    conversations = [f"refill-load-{index}" for index in range(concurrency)]
    for conversation in conversations:
        await start_conversation(stack, conversation, repository)
    counted_per_window = WINDOW_SECONDS - RAMP_SECONDS
    # Two rounds of full windows at least (--quick too): with one, a side's two windows are next to each
    # other, and the machine's drift over that half minute falls on one side.
    rounds = max(2, round(seconds / (2 * counted_per_window)))
    window = max(seconds / (2 * rounds), counted_per_window) + RAMP_SECONDS
    seconds = 2 * rounds * (window - RAMP_SECONDS)  # counted per side
    loads = {side: _Load() for side in LOAD_ORDER}
    arrivals = {"today": 0, "warm": 0}
    misses_before = _warm_misses(stack, pooled.name)

    async def arriving(side: str, until: float) -> None:
        """New conversations, one after another, until the window ends."""
        target = pooled if side == "warm" else today
        while time.monotonic() < until:
            conversation = f"refill-new-{side}-{arrivals[side]}"
            arrivals[side] += 1
            await say(stack, conversation, f"/clone {target}")
            result = await say(stack, conversation)
            assert result["outcome"] == "created", result
            await asyncio.sleep(NEW_CONVERSATION_PAUSE)

    async def measured(side: str) -> tuple[list[float], int]:
        arrivals_task = asyncio.create_task(arriving(side, time.monotonic() + window))
        counted = await _saturate(lambda index: say(stack, conversations[index]), concurrency, window, RAMP_SECONDS)
        await arrivals_task
        return counted

    await _saturate(lambda index: say(stack, conversations[index]), concurrency, window, RAMP_SECONDS)  # warm-up
    for _ in range(rounds):
        for side in LOAD_ORDER:
            loads[side].add(*await measured(side), window - RAMP_SECONDS)
    claimed = arrivals["warm"] - (_warm_misses(stack, pooled.name) - misses_before)
    rate, baseline_rate = loads["warm"].rate, loads["today"].rate
    ratio = rate / baseline_rate
    return [
        Figure(f"throughput with the pool refilling, reuse, {concurrency} conversations", f"{rate:.1f} msg/s",
               f"today's throughput case: {baseline_rate:.1f}/s", verdict(ratio >= 0.95),
               {"rate": round(rate, 1), "baseline_rate": round(baseline_rate, 1), "ratio": round(ratio, 3),
                "new_conversations": arrivals, "claimed": claimed, "seconds": seconds,
                "windows": {"seconds": round(window, 1), "ramp_not_counted": RAMP_SECONDS, "per_side": 2 * rounds}}),
        Figure("  ratio to today's throughput case", f"x{ratio:.2f} (target >= 0.95)",
               f"new conversations meanwhile: {arrivals['warm']} ({claimed} claimed a warm worktree) / "
               f"{arrivals['today']}"),
    ]


def _warm_misses(stack: Stack, codebase_name: str) -> int:
    """Creates of the codebase that found no warm worktree, as the worker and the API process log them."""
    needle = f" of {codebase_name} ("
    logs = [stack.work / f"{name}.log" for name in ("worker", "api")]
    return sum(1 for log in logs if log.exists() for line in log.read_text(errors="replace").splitlines()
               if "no warm worktree for" in line and needle in line)
