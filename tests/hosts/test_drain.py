"""A drain (SIGTERM, or `isolator worker --drain`) during an agent run: the worker takes no new run, the
run in flight finishes and its answer arrives; a run queued behind it waits for the host's next worker
and is never called interrupted."""

from __future__ import annotations

import asyncio
from pathlib import Path

import asyncpg

from isolator.settings import load_settings
from tests.agents import command
from tests.gitrepos import make_repo
from tests.hosts.conftest import MakeCluster
from tests.hosts.cluster import Cluster
from workers.drain import drain_workers


async def run_statuses(db: asyncpg.Pool) -> dict[str, str]:
    return {row["message"]: row["status"] for row in await db.fetch("SELECT message, status FROM agent_runs")}


async def until_status(db: asyncpg.Pool, message: str, status: str, seconds: float = 60) -> None:
    for _ in range(int(seconds * 10)):
        if (await run_statuses(db)).get(message) == status:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"{message} is not {status}: {await run_statuses(db)}")


async def two_runs_on_host_b(cluster: Cluster, db: asyncpg.Pool) -> None:
    """`work-1` running on hostB (its agent waits for the release file), `work-2` queued behind it."""
    host = cluster.host("hostB")
    await cluster.register("hostB", make_repo(host.folder / "repos" / "project-b"))
    for number in (1, 2):
        await cluster.say(f"drain-{number}", "/clone project-b")
    await cluster.send("drain-1", "work-1")
    await until_status(db, "work-1", "running")
    await cluster.send("drain-2", "work-2")
    await until_status(db, "work-2", "queued")


async def test_a_drained_worker_lets_its_run_finish_and_leaves_the_queued_one_for_the_next(
        make_cluster: MakeCluster, db: asyncpg.Pool, tmp_path: Path) -> None:
    release = tmp_path / "release"
    cluster = await make_cluster(hosts=["hostA", "hostB"], apis=1, env={
        "AGENT_COMMAND": command("waiter", str(release)), "SANDBOX_WRITABLE_PATHS": str(tmp_path),
        "AGENT_MAX_CONCURRENT": "1", "WORKER_DRAIN_SECONDS": "300"})
    await two_runs_on_host_b(cluster, db)

    await cluster.terminate("hostB", wait=False)
    await asyncio.sleep(3)  # it ended within about 2 s before drains
    worker = cluster.host("hostB").worker
    assert worker.alive, worker.log_text()[-3000:]
    assert await run_statuses(db) == {"work-1": "running", "work-2": "queued"}

    release.touch()
    answer = await cluster.reply_containing("drain-1", "finished work-1")
    assert "interrupted" not in answer
    assert await worker.wait_ended() == 0
    await until_status(db, "work-1", "done")
    assert (await run_statuses(db))["work-2"] == "queued", "left for the host's next worker"
    assert not any("interrupted" in text for text in await cluster.replies("drain-2"))

    await cluster.restart("hostB")
    await cluster.reply_containing("drain-2", "finished work-2")
    await until_status(db, "work-2", "done")


async def test_isolator_worker_drain_stops_the_hosts_worker_once_its_run_ends(
        make_cluster: MakeCluster, db: asyncpg.Pool, tmp_path: Path) -> None:
    release = tmp_path / "release"
    cluster = await make_cluster(hosts=["hostA", "hostB"], apis=1, env={
        "AGENT_COMMAND": command("waiter", str(release)), "SANDBOX_WRITABLE_PATHS": str(tmp_path),
        "AGENT_MAX_CONCURRENT": "1", "WORKER_DRAIN_SECONDS": "300"})
    await two_runs_on_host_b(cluster, db)
    worker = cluster.host("hostB").worker
    said: list[str] = []
    settings = load_settings(database_url=worker.env["DATABASE_URL"], host="hostB", worker_drain_seconds=300)

    draining = asyncio.create_task(drain_workers(settings, said.append))
    await asyncio.sleep(3)
    assert not draining.done() and worker.alive, said
    assert said and f"worker pid {worker.pid}" in said[0], said
    release.touch()
    await cluster.reply_containing("drain-1", "finished work-1")
    await worker.wait_ended()  # its parent here reaps it, so that the drain sees it gone
    assert await asyncio.wait_for(draining, 60) == 0
    assert said[-1] == "hostB drained: its worker has ended"
    assert (await run_statuses(db))["work-2"] == "queued"
