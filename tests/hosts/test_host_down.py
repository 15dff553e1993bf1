"""A host SIGKILLed: its users are told within seconds, `/status` answers, the other hosts go on without
a stall, and the messages that waited run once when the host is back."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from pathlib import Path

from temporalio.worker import Replayer

from isolator.payloads import DATA_CONVERTER
from tests.agents import command
from tests.gitrepos import make_repo
from tests.hosts.conftest import MakeCluster
from tests.hosts.cluster import Cluster
from workers.worker import WORKFLOWS

TOLD_WITHIN = 5.0  # the bound for "your message waits"
NO_STALL = 8.0  # a healthy host's message, while another host is dead (it was 10.6 s before)


def runs_of(record: Path) -> Counter[str]:
    """How many times each message's run ended (the recorder agent's `end <message> <time>` lines)."""
    lines = record.read_text().splitlines() if record.exists() else []
    return Counter(line.split(" ")[1] for line in lines if line.startswith("end "))


async def ran(record: Path, message: str, seconds: float = 120) -> None:
    for _ in range(int(seconds * 10)):
        if runs_of(record)[message]:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"{message} did not run: {record.read_text() if record.exists() else ''}")


async def conversation_on(cluster: Cluster, host: str, record: Path) -> str:
    """A conversation working in `host`'s codebase, its first run done."""
    conversation = f"on-{host}"
    await cluster.say(conversation, f"/clone project-{host}")
    await cluster.say(conversation, f"first-{host}")
    await ran(record, f"first-{host}")
    return conversation


async def test_a_killed_host_tells_its_users_answers_status_and_runs_their_messages_once_back(
        make_cluster: MakeCluster, tmp_path: Path) -> None:
    record = tmp_path / "runs.txt"
    cluster = await make_cluster(env={"AGENT_COMMAND": command("recorder", str(record), "0"),
                                      "SANDBOX_WRITABLE_PATHS": str(tmp_path)})
    for name, host in cluster.hosts.items():
        await cluster.register(name, make_repo(host.folder / "repos" / f"project-{name}"))
    conversations = {name: await conversation_on(cluster, name, record) for name in cluster.hosts}

    cluster.kill("hostB")
    sent = time.monotonic()
    waiting = await cluster.send(conversations["hostB"], "second-hostB", api=1)
    told = await cluster.reply_containing(conversations["hostB"], "has not answered", seconds=30)
    told_after = time.monotonic() - sent
    assert told_after < TOLD_WITHIN, f"told after {told_after:.1f} s"
    assert "The machine holding `project-hostB` (hostB) has not answered since" in told
    assert "Your message waits and runs when it is back." in told

    asking = time.monotonic()
    status = await cluster.say(conversations["hostB"], "/status")
    assert time.monotonic() - asking < TOLD_WITHIN
    said = "\n".join(status["result"]["replies"])
    assert "Codebase: project-hostB" in said and "hostB" in said and "has not answered" in said, said

    for name in ("hostA", "hostC"):  # the live hosts: no wait on the dead one
        started = time.monotonic()
        answer = await cluster.say(conversations[name], f"second-{name}", api=1)
        took = time.monotonic() - started
        assert answer["result"]["outcome"] == "reused", answer
        assert took < NO_STALL, f"{name}'s message took {took:.1f} s while hostB was down"
        await ran(record, f"second-{name}")
    assert not runs_of(record)["second-hostB"]

    await cluster.restart("hostB")
    await ran(record, "second-hostB")
    await asyncio.sleep(2)  # time for a second run, if one were coming
    assert runs_of(record) == Counter({f"{step}-{name}": 1 for step in ("first", "second")
                                       for name in cluster.hosts}), record.read_text()
    replies = await cluster.replies(conversations["hostB"])
    assert sum("has not answered since" in text and "waits" in text for text in replies) == 1, replies

    handle = cluster.temporal.get_workflow_handle(waiting["workflowId"])
    await handle.result()
    replayed = await Replayer(workflows=WORKFLOWS, data_converter=DATA_CONVERTER).replay_workflow(
        await handle.fetch_history())  # the wait's timers and looks replay, in the strict sandbox
    assert replayed.replay_failure is None
