"""A host dies while its worker holds in its cache the environment workflow of a conversation on another,
healthy host: that conversation's next message does not stall (it waited 10 s, Temporal's defaults, for
the sticky queue and for a task handed to the dead worker's last poll)."""

from __future__ import annotations

import time
import uuid

from temporalio.api.enums.v1 import EventType

from tests.gitrepos import make_repo
from tests.hosts.conftest import MakeCluster
from tests.hosts.cluster import Cluster

STALL = 5.0  # what a message may take just after another host died (a failover of about 2 s, and the message)


async def held_elsewhere(cluster: Cluster, codebase: str) -> tuple[str, str]:
    """A new conversation of `codebase` (on hostA) whose environment workflow another host's worker has in
    its cache (its last task completed there), and that host."""
    for _ in range(60):
        conversation = f"held-{uuid.uuid4().hex[:6]}"
        await cluster.say(conversation, f"/clone {codebase}")
        answer = await cluster.say(conversation, "first")
        history = await cluster.temporal.get_workflow_handle(
            f"environment:{answer['result']['environmentId']}").fetch_history()
        completed = [event.workflow_task_completed_event_attributes.identity for event in history.events
                     if event.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED]
        for name, host in cluster.hosts.items():
            if name != "hostA" and completed[-1].startswith(f"{host.worker.pid}@"):
                return conversation, name
    raise AssertionError("no environment workflow was held by another host than hostA")


async def test_a_healthy_hosts_conversation_does_not_wait_for_a_dead_workers_cache(
        make_cluster: MakeCluster) -> None:
    cluster = await make_cluster(apis=1, env={"AGENT_COMMAND": "true", "MAX_WORKTREES_PER_CODEBASE": "200"})
    await cluster.register("hostA", make_repo(cluster.host("hostA").folder / "repos" / "project-a"))
    conversation, holder = await held_elsewhere(cluster, "project-a")

    cluster.kill(holder)
    started = time.monotonic()
    answer = await cluster.say(conversation, "after the death")
    took = time.monotonic() - started
    assert answer["result"]["outcome"] == "reused", answer
    assert took < STALL, f"{took:.1f} s with {holder} dead"
