"""A loaded host: many runs of an agent that talks a lot, queued through its AGENT_MAX_CONCURRENT slots,
while new worktrees are made there: every run ends done, none is taken for interrupted while its worker
lives, and the worker's heartbeats keep near their second (a late one is logged: workers/heartbeats.py).
`make test-loaded` runs it beside CPU burners, as the issue's loaded host was."""

from __future__ import annotations

import asyncio
import re

import asyncpg

from tests.agents import command
from tests.gitrepos import make_repo
from tests.hosts.conftest import MakeCluster
from workers.heartbeats import LATE_SECONDS

CONVERSATIONS = 8
MESSAGES = 2  # each conversation's runs queue behind each other, and behind the other conversations'
LINES = 100_000  # some 9 MB of output per run
CREATES = 6  # worktrees made on the host meanwhile


async def test_a_loaded_host_ends_every_run_done(make_cluster: MakeCluster, db: asyncpg.Pool) -> None:
    cluster = await make_cluster(hosts=["hostA", "hostB"], apis=1, env={
        "AGENT_COMMAND": command("chatter", str(LINES)), "AGENT_MAX_CONCURRENT": "4"})
    host = cluster.host("hostB")
    await cluster.register("hostB", make_repo(host.folder / "repos" / "project-b"))
    conversations = [f"loaded-{number}" for number in range(CONVERSATIONS)]
    for conversation in conversations:
        await cluster.say(conversation, "/clone project-b")

    async def talk(conversation: str) -> None:
        # Sent at once into a conversation that has no worktree yet: the second may queue its run before the
        # first has started the environment's workflow (tests/workflows/test_first_messages_race.py).
        for number in range(MESSAGES):
            await cluster.send(conversation, f"message {number}")

    async def create(number: int) -> None:
        await cluster.say(f"made-{number}", "/clone project-b")
        await cluster.say(f"made-{number}", "/worktree create load-" + str(number))

    await asyncio.gather(*(talk(conversation) for conversation in conversations),
                         *(create(number) for number in range(CREATES)))
    for _ in range(6000):
        statuses = [row["status"] for row in await db.fetch("SELECT status FROM agent_runs")]
        if len(statuses) == CONVERSATIONS * MESSAGES and all(status not in ("queued", "running") for status in statuses):
            break
        await asyncio.sleep(0.1)
    late = [float(gap) for gap in re.findall(r"came ([0-9.]+) s after the one before", host.worker.log_text())]
    print(f"runs: {len(statuses)}, statuses {sorted(set(statuses))}; heartbeats {LATE_SECONDS:g} s late or more: "
          f"{len(late)}, longest {max(late, default=0):.1f} s")
    assert statuses == ["done"] * CONVERSATIONS * MESSAGES, (statuses, cluster.log_text())
