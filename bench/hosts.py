"""Several hosts (issue 49): agent runs spread over two hosts against one; a conversation on a healthy host
while another host dies; and how soon a workflow cached on a dead worker moves to a live one.

Each side is a deployment of tests/hosts/cluster.py (worker processes of their own ISOLATOR_HOST, an API),
on the bench's PostgreSQL and Temporal, on a queue of its own.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from contextlib import asynccontextmanager
from typing import AsyncIterator

import asyncpg
from temporalio.api.enums.v1 import EventType, TimeoutType

from bench.figures import Figure, Latency, timed, verdict
from bench.repos import make_repository
from bench.stack import Stack, free_port
from tests.hosts.cluster import Cluster

SLEEPING_AGENT = "sleep 2"  # the agent: two seconds of nothing, in the sandbox
SLOTS = 4  # AGENT_MAX_CONCURRENT of every host (the default)
SPREAD_TARGET = 1.8
REUSE_TARGET_MS = 50.0
FAILOVER_TARGET_S = 2.0
FAILOVER_ROUNDS = 5


@asynccontextmanager
async def cluster_of(stack: Stack, hosts: list[str], env: dict[str, str]) -> AsyncIterator[Cluster]:
    folder = stack.work / f"cluster-{uuid.uuid4().hex[:6]}"
    address = stack.temporal.service_client.config.target_host
    cluster = Cluster(folder, stack.database_url, address, stack.temporal, hosts, 1, [free_port()], env=env)
    try:
        await cluster.start()
        yield cluster
    finally:
        await cluster.stop()


async def register(cluster: Cluster, stack: Stack, host: str, name: str) -> None:
    repository = make_repository(stack.trees / "hosts" / name, files=50, folders=1)
    await cluster.register(host, repository)


async def runs_ended(pool: asyncpg.Connection, message: str, count: int) -> None:
    while await pool.fetchval("SELECT count(*) FROM agent_runs WHERE message = $1 AND status NOT IN "
                              "('queued', 'running')", message) < count:
        await asyncio.sleep(0.05)


async def spread_runs(stack: Stack, conversations: int) -> list[Figure]:
    """`conversations` conversations each send a message at once; seconds until every run has ended."""
    one = await _runs_over(stack, ["hostA"], conversations)
    two = await _runs_over(stack, ["hostA", "hostB"], conversations)
    ratio = one / two
    return [Figure(f"{conversations} conversations' runs (a 2 s agent, {SLOTS} slots a host), two hosts against one",
                   f"x{ratio:.2f}: {two:.1f} s against {one:.1f} s", "one host, same run",
                   verdict(ratio >= SPREAD_TARGET) + f" (target >= x{SPREAD_TARGET})",
                   {"one_host_s": round(one, 2), "two_hosts_s": round(two, 2), "ratio": round(ratio, 2)})]


async def _runs_over(stack: Stack, hosts: list[str], conversations: int) -> float:
    tag = uuid.uuid4().hex[:6]
    async with cluster_of(stack, hosts, {"AGENT_COMMAND": SLEEPING_AGENT, "AGENT_MAX_CONCURRENT": str(SLOTS),
                                         "MAX_WORKTREES_PER_CODEBASE": str(conversations)}) as cluster:
        for host in hosts:
            await register(cluster, stack, host, f"spread-{tag}-{host}")
        names = [f"spread-{tag}-{number}" for number in range(conversations)]
        pool = await asyncpg.connect(stack.database_url)
        try:
            room = asyncio.Semaphore(8)

            async def prepare(number: int, name: str) -> None:  # its worktree, and a first run, before the clock
                async with room:
                    await cluster.say(name, f"/clone spread-{tag}-{hosts[number % len(hosts)]}")
                    await cluster.say(name, f"first {tag}")

            await asyncio.gather(*(prepare(number, name) for number, name in enumerate(names)))
            await runs_ended(pool, f"first {tag}", conversations)
            started = time.monotonic()
            await asyncio.gather(*(cluster.send(name, f"go {tag}") for name in names))
            await runs_ended(pool, f"go {tag}", conversations)
            return time.monotonic() - started
        finally:
            await pool.close()


async def healthy_host_while_another_dies(stack: Stack, runs: int) -> list[Figure]:
    """Conversations on hostA, their messages handed to a no-op agent: reuse latency with the other hosts
    alive, then from the moment the one whose worker holds the conversation's environment workflow in its
    cache is SIGKILLed. And the failover: how soon such a message is answered (each round a new one)."""
    # Room for the conversations `_cached_on` goes through to find a workflow held by another host.
    async with cluster_of(stack, ["hostA", "hostB", "hostC"], {"AGENT_COMMAND": "true",
                                                               "MAX_WORKTREES_PER_CODEBASE": "500"}) as cluster:
        tag = uuid.uuid4().hex[:6]
        await register(cluster, stack, "hostA", f"healthy-{tag}")
        failovers: list[float] = []
        lost: list[str] = []  # workflow tasks that timed out: on a sticky queue, or handed to the dead worker
        for _ in range(FAILOVER_ROUNDS):
            conversation, environment, holder = await _cached_elsewhere(cluster, f"healthy-{tag}")
            cluster.kill(holder)
            started = time.monotonic()
            answer = await cluster.say(conversation, "failover")
            failovers.append(time.monotonic() - started)
            lost += [f"{kind} of {name}" for name, workflow_id in (("message", answer["workflowId"]),
                                                                  ("environment", environment))
                     for kind in await _timed_out_tasks(cluster, workflow_id)]
            await cluster.restart(holder)
        conversation, _, holder = await _cached_elsewhere(cluster, f"healthy-{tag}")
        for _ in range(3):  # first-use costs
            await cluster.say(conversation, "warm")
        alive = [await timed(lambda: cluster.say(conversation, "alive")) for _ in range(runs)]
        cluster.kill(holder)
        dying = [await timed(lambda: cluster.say(conversation, "dying")) for _ in range(runs)]
    before, during = Latency.of(alive), Latency.of(dying)
    above = round(during.p50 - before.p50, 1)
    slowest = max(failovers)
    return [
        Figure("reuse on a healthy host from the moment another host dies, above it alive (p50)",
               f"{above:+.1f} ms (dying: {during}; its first {dying[0]:.0f} ms)", f"alive: {before}",
               verdict(above <= REUSE_TARGET_MS) + f" (target <= +{REUSE_TARGET_MS:g} ms)",
               {"alive": vars(before), "dying": vars(during), "above_ms": above, "dying_first_ms": round(dying[0])}),
        Figure("failover: a message whose environment workflow was cached on the killed worker",
               ", ".join(f"{seconds:.2f} s" for seconds in failovers) + f"; tasks timed out: {lost or 'none'}",
               "Temporal's default: 10 s", verdict(slowest <= FAILOVER_TARGET_S) + f" (target <= {FAILOVER_TARGET_S:g} s)",
               {"failover_s": [round(seconds, 3) for seconds in failovers], "timed_out_tasks": lost}),
    ]


async def _timed_out_tasks(cluster: Cluster, workflow_id: str) -> list[str]:
    history = await cluster.temporal.get_workflow_handle(workflow_id).fetch_history()
    return [TimeoutType.Name(event.workflow_task_timed_out_event_attributes.timeout_type) for event in history.events
            if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT]


async def _cached_elsewhere(cluster: Cluster, codebase: str) -> tuple[str, str, str]:
    """A new conversation of `codebase` (on hostA) whose environment workflow another host's worker holds in
    its cache (its last task completed there): the conversation, the workflow's id and that host. An
    environment's first task goes to any worker of the shared queue."""
    for _ in range(100):
        conversation = f"{codebase}-{uuid.uuid4().hex[:6]}"
        await cluster.say(conversation, f"/clone {codebase}")
        answer = await cluster.say(conversation, "first")
        assert answer["result"]["environmentId"], answer
        environment = f"environment:{answer['result']['environmentId']}"
        completed = [event.workflow_task_completed_event_attributes.identity
                     for event in (await cluster.temporal.get_workflow_handle(environment).fetch_history()).events
                     if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED]
        for name, host in cluster.hosts.items():
            if name != "hostA" and completed and completed[-1].startswith(f"{host.worker.pid}@"):
                return conversation, environment, name
    raise AssertionError(f"no environment workflow of {codebase} ran on another host than hostA")
