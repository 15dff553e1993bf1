"""Moving a codebase and replacing a lost host (issue 49): what each costs against the git it cannot do without.

One deployment of two hosts (tests/hosts/cluster.py, ARCHIVE_PUSH on) and a 5,000-file repository behind a
`file://` origin, with three worktrees each holding an uncommitted file. Timed: its move to the other host
with the old host alive, then back, then away from a killed host (which waits the 10 s the move gives the old
host to answer); a worker restarted on an empty disk until it polls (its clone and the worktrees put back),
against a plain restart. The baseline, measured in the same run on the hosts' disk (not the tmpfs of the
bench's trees): `git clone` of the origin and a `git worktree add` per worktree, the git a move or a rebuild
cannot do without.
"""

from __future__ import annotations

import shutil
import time
import uuid
from pathlib import Path

from contextlib import asynccontextmanager
from typing import AsyncIterator

from bench.figures import Figure
from bench.repos import make_repository
from bench.stack import Stack, free_port
from tests.gitrepos import git
from tests.hosts.cluster import Cluster

WORKTREES = 3


@asynccontextmanager
async def cluster_of(stack: Stack, hosts: list[str], env: dict[str, str]) -> AsyncIterator[Cluster]:
    """Worker processes of their own ISOLATOR_HOST and an API, on the bench's PostgreSQL and Temporal."""
    cluster = Cluster(stack.work / f"cluster-{uuid.uuid4().hex[:6]}", stack.database_url,
                      stack.temporal.service_client.config.target_host, stack.temporal, hosts, 1, [free_port()], env=env)
    try:
        await cluster.start()
        yield cluster
    finally:
        await cluster.stop()


def raw_floor(origin: Path, folder: Path, branches: list[str]) -> float:
    """Seconds of `git clone` and a `git worktree add` per branch, by hand."""
    started = time.perf_counter()
    git("clone", "-q", f"file://{origin}", str(folder / "clone"), cwd=origin.parent)
    for branch in branches:
        git("worktree", "add", "-q", "-b", branch, str(folder / branch), cwd=folder / "clone")
    return time.perf_counter() - started


async def move_and_rebuild(stack: Stack, files: int = 5000) -> list[Figure]:
    place = stack.trees / f"relocation-{uuid.uuid4().hex[:6]}"
    work = make_repository(place / "work", files=files, folders=max(1, files // 25))
    origin = place / "origin.git"
    git("clone", "-q", "--bare", str(work), str(origin), cwd=place)
    # On the hosts' own disk (the cluster's folders are in `stack.work`), as their clones and checkouts are.
    raw_place = stack.work / f"relocation-raw-{uuid.uuid4().hex[:6]}"
    floor = raw_floor(origin, raw_place, [f"raw-{number}" for number in range(WORKTREES)])
    shutil.rmtree(raw_place, ignore_errors=True)
    seconds: dict[str, float] = {}
    async with cluster_of(stack, ["hostA", "hostC"], {"ARCHIVE_PUSH": "true"}) as cluster:
        codebase = await cluster.register("hostA", url=f"file://{origin}", name=f"moving-{uuid.uuid4().hex[:6]}")
        for number in range(WORKTREES):
            await cluster.say(f"move-{number}", f"/clone {codebase['name']}")
            path = Path((await cluster.say(f"move-{number}", "hello"))["result"]["workingPath"])
            (path / "draft.txt").write_text("not committed\n")
        for name, host, kill in (("alive", "hostC", None), ("back", "hostA", None), ("dead", "hostC", "hostA")):
            if kill:
                cluster.kill(kill)
            started = time.perf_counter()
            moved = await cluster.api().post(f"/api/codebases/{codebase['id']}/move", params={"wait": "true"},
                                             json={"host": host})
            seconds[name] = time.perf_counter() - started
            assert moved.status_code == 200 and [item["outcome"] for item in moved.json()["worktrees"]] == \
                ["archive"] * WORKTREES, moved.text
        cluster.kill("hostC")
        started = time.perf_counter()
        await cluster.restart("hostC")
        seconds["restart"] = time.perf_counter() - started
        cluster.kill("hostC")
        for folder in (cluster.host("hostC").data_dir, cluster.host("hostC").worktree_base,
                       cluster.host("hostC").workspace):
            shutil.rmtree(folder, ignore_errors=True)
        started = time.perf_counter()
        await cluster.restart("hostC")
        seconds["rebuild"] = time.perf_counter() - started
    raw = f"git clone + {WORKTREES} worktree adds by hand {floor:.1f} s"
    shown = f"{files:,} files, {WORKTREES} worktrees with uncommitted files"
    return [
        Figure(f"move a codebase ({shown}), old host alive", f"{seconds['alive']:.1f} s (x{seconds['alive'] / floor:.1f})",
               raw, data={"seconds": seconds, "floor": floor}),
        Figure("  the same, moved back", f"{seconds['back']:.1f} s (x{seconds['back'] / floor:.1f})", raw),
        Figure("  the same, old host killed (ARCHIVE_PUSH)", f"{seconds['dead']:.1f} s (x{seconds['dead'] / floor:.1f})",
               raw + " (+10 s waited for the old host)"),
        Figure(f"worker restart on an empty disk until it polls ({shown})", f"{seconds['rebuild']:.1f} s",
               f"plain restart {seconds['restart']:.1f} s; {raw}"),
    ]
