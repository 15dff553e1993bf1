"""Ready to work: what a repository's set-up costs beyond its own commands, and the include copy
against `cp -a` of the same folder."""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
from pathlib import Path

import asyncpg

from activities.providers.worktree.include import copy_included
from bench.figures import Figure, Latency, timed, verdict
from bench.messages import say
from bench.repos import git, make_repository
from bench.stack import Stack

SETUP_COMMANDS = ["echo one > one.txt", "echo two > two.txt"]


async def setup_overhead(stack: Stack, repositories: Path, runs: int) -> list[Figure]:
    """A create with a two-command set-up, until its set-up is done, minus a create of a repository
    without set-up, minus the same commands run by hand; the three alternate, run by run."""
    plain = make_repository(repositories / "no-setup", files=50, folders=1)
    with_setup = make_repository(repositories / "with-setup", files=50, folders=1)
    quoted = ", ".join(f'"{command}"' for command in SETUP_COMMANDS)
    (with_setup / ".isolator.toml").write_text(f"[setup]\ncommands = [{quoted}]\n")
    git("add", ".isolator.toml", cwd=with_setup)
    git("commit", "-q", "-m", "set-up", cwd=with_setup)
    for repository in (plain, with_setup):
        (await stack.api.post("/api/codebases", json={"path": str(repository)})).raise_for_status()
    by_hand_folder = stack.trees / "by-hand"
    by_hand_folder.mkdir()
    pool = await asyncpg.connect(stack.database_url)
    try:
        with_setups, plains, by_hands = [], [], []
        for run in range(runs):
            with_setups.append(await timed(lambda: create_until_ready(stack, pool, with_setup, f"setup-{run}")))
            plains.append(await timed(lambda: create(stack, plain, f"plain-{run}")))
            by_hands.append(await timed(lambda: run_by_hand(by_hand_folder)))
    finally:
        await pool.close()
    overhead = statistics.median(full - bare - hand for full, bare, hand in zip(with_setups, plains, by_hands))
    full_figure, plain_figure, hand_figure = Latency.of(with_setups), Latency.of(plains), Latency.of(by_hands)
    return [
        Figure("create with a 2-command set-up, until ready", str(full_figure),
               f"create without set-up: {plain_figure}; the commands by hand: {hand_figure}",
               verdict(overhead <= 30),
               {"latency": vars(full_figure), "plain": vars(plain_figure), "by_hand": vars(hand_figure),
                "overhead_p50": round(overhead, 1)}),
        Figure("  set-up overhead (median of each run's difference)", f"{overhead:.1f} ms (target <= 30)"),
    ]


async def create(stack: Stack, repository: Path, conversation: str) -> None:
    await say(stack, conversation, f"/clone {repository}")
    result = await say(stack, conversation)
    assert result["outcome"] == "created", result


async def create_until_ready(stack: Stack, pool: asyncpg.Connection, repository: Path, conversation: str) -> None:
    await say(stack, conversation, f"/clone {repository}")
    result = await say(stack, conversation)
    assert result["outcome"] == "created", result
    while (state := await pool.fetchval("SELECT setup_state FROM isolation_environments WHERE id = $1::uuid",
                                        result["environmentId"])) in ("none", "running"):
        await asyncio.sleep(0.002)
    assert state == "ready", state


async def run_by_hand(folder: Path) -> None:
    for command in SETUP_COMMANDS:
        process = await asyncio.create_subprocess_exec("sh", "-c", command, cwd=folder)
        await process.wait()


async def include_copy(trees: Path, runs: int, megabytes: int) -> list[Figure]:
    """A `.worktreeinclude`d folder of `megabytes` MB (node_modules-like: many files, some links) copied
    into a new folder, against `cp -a` of the same folder; alternating."""
    checkout = make_repository(trees / "include-source", files=3, folders=1)
    (checkout / ".gitignore").write_text("node_modules/\n")
    (checkout / ".worktreeinclude").write_text("node_modules\n")
    _fill(checkout / "node_modules", megabytes)
    ours, theirs = [], []
    for run in range(runs):
        target, other = trees / f"include-ours-{run}", trees / f"include-cp-{run}"
        target.mkdir()
        # Each goes first every other run: the first copy after a deletion pays for the freed pages.
        for side in ((0, 1) if run % 2 == 0 else (1, 0)):
            if side == 0:
                ours.append(await timed(lambda: copy_included(checkout, target, [])))
            else:
                theirs.append(await timed(lambda: _cp(checkout / "node_modules", other)))
        shutil.rmtree(target)
        shutil.rmtree(other)
    ours_figure, cp_figure = Latency.of(ours), Latency.of(theirs)
    ratio = statistics.median(ours) / statistics.median(theirs)
    return [Figure(f"include copy, {megabytes} MB folder", str(ours_figure), f"cp -a: {cp_figure}",
                   verdict(ratio <= 1.1), {"latency": vars(ours_figure), "baseline": vars(cp_figure),
                                           "ratio": round(ratio, 2)}),
            Figure("  ratio to cp -a (medians)", f"{ratio:.2f} (target <= 1.1)")]


def _fill(folder: Path, megabytes: int) -> None:
    """Packages of files from 1 KB to 1 MB, as node_modules holds them, with a link per package."""
    sizes = [1 << 10, 8 << 10, 64 << 10, 1 << 20]
    written, number = 0, 0
    while written < megabytes << 20:
        package = folder / f"package-{number // 20:04d}" / "lib"
        package.mkdir(parents=True, exist_ok=True)
        size = sizes[number % len(sizes)]
        (package / f"file-{number}.js").write_bytes(os.urandom(size))
        if number % 20 == 0:
            os.symlink(f"lib/file-{number}.js", package.parent / "index.js")
        written += size
        number += 1


async def _cp(source: Path, target: Path) -> None:
    process = await asyncio.create_subprocess_exec("cp", "-a", str(source), str(target))
    assert await process.wait() == 0, "cp -a failed"
