"""A worker SIGKILLed during an agent run: the run is marked interrupted and the user told, the
agent's processes end with the worker (the sandbox's `--die-with-parent`; unconfined, the host's worker
kills them when it starts again), the run is never started a
second time (an agent is not idempotent), and the queue goes on."""

from __future__ import annotations

import asyncio
import os
import uuid
from pathlib import Path

import asyncpg
import httpx
from temporalio.client import Client

from isolator.settings import Settings
from tests.agent_runs import alive, spawned
from tests.agents import command
from tests.faults.conftest import WorkerProcess, register, wait_for
from workflows.agent_run import agent_run_workflow_id

ROUNDS = int(os.environ.get("ISOLATOR_SOAK_ROUNDS", "1"))


async def status_of(db: asyncpg.Pool, run_id: str) -> str:
    return await db.fetchval("SELECT status FROM agent_runs WHERE id = $1", uuid.UUID(run_id))


async def until_status(db: asyncpg.Pool, run_id: str, wanted: str, seconds: float = 60) -> None:
    for _ in range(int(seconds * 20)):
        if await status_of(db, run_id) == wanted:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"run {run_id} is {await status_of(db, run_id)}, not {wanted}")


async def test_a_run_whose_worker_is_killed_is_interrupted_once_and_the_queue_goes_on(
    worker: WorkerProcess, api: httpx.AsyncClient, temporal: Client, db: asyncpg.Pool,
    settings: Settings, repo: Path, tmp_path: Path,
) -> None:
    worker.start()
    await register(api, repo)
    for round_number in range(ROUNDS):
        pids, conversation = tmp_path / f"pids-{round_number}", f"killed-{round_number}"
        worker.extra_env["AGENT_COMMAND"] = command("spawner", str(pids))
        worker.stop()
        worker.start()
        first = await api.post("/test/message", params={"wait": "true"},
                               json={"conversationId": conversation, "message": "work for ever"})
        run = first.json()["result"]["agentRunId"]
        await wait_for(pids, worker)
        queued = await api.post("/test/message", params={"wait": "true"},
                                json={"conversationId": conversation, "message": "then something quick"})
        next_run = queued.json()["result"]["agentRunId"]
        agent, child = spawned(pids)

        assert alive(agent) and alive(child)
        worker.kill()
        for _ in range(200):  # in the sandbox (`--die-with-parent`) the agent ends with its worker
            if not alive(agent) and not alive(child):
                break
            await asyncio.sleep(0.05)
        worker.start()

        await until_status(db, run, "interrupted")
        assert not alive(agent) and not alive(child), "nothing of the run is left once the worker is back"
        await until_status(db, next_run, "done")
        assert len(pids.read_text().splitlines()) == 1, "the interrupted run was not started again"
        replies = [row["body"] for row in await db.fetch(
            "SELECT body FROM outbound_messages WHERE platform_conversation_id = $1 ORDER BY id", conversation)]
        told = [reply for reply in replies if "was interrupted" in reply]
        assert len(told) == 1 and "send your message again" in told[0]
        assert any(reply.startswith("quick answer") for reply in replies)


async def test_a_run_whose_worker_shuts_down_says_so_once_in_plain_words(
    worker: WorkerProcess, api: httpx.AsyncClient, temporal: Client, db: asyncpg.Pool,
    settings: Settings, repo: Path, tmp_path: Path,
) -> None:
    """Ctrl-C or a restart past the drain: the worker shuts down gracefully, the run ends its answer with one plain
    message, is recorded as interrupted, and is not said to be stopped nor to have failed; nothing more
    is said of it after the restart (issue 47, item 9)."""
    pids, conversation = tmp_path / "pids", "shut-down"
    # No drain: past WORKER_DRAIN_SECONDS, the runs still going are interrupted (tests/hosts/test_drain.py)
    worker.start(AGENT_COMMAND=command("spawner", str(pids)), WORKER_DRAIN_SECONDS="0")
    await register(api, repo)
    first = await api.post("/test/message", params={"wait": "true"},
                           json={"conversationId": conversation, "message": "work for ever"})
    run = first.json()["result"]["agentRunId"]
    await wait_for(pids, worker)

    worker.stop()
    worker.start()

    await until_status(db, run, "interrupted")
    # The run's record ends once the workflow, back after the restart, has dealt with the run's end: by
    # then anything it would say of the run is said.
    await temporal.get_workflow_handle(agent_run_workflow_id(run)).result()
    replies = [row["body"] for row in await db.fetch(
        "SELECT body FROM outbound_messages WHERE platform_conversation_id = $1 ORDER BY id", conversation)]
    said = [reply for reply in replies if "restarted" in reply or "interrupted" in reply or "Stopped" in reply]
    assert len(said) == 1, replies
    assert "The service restarted while the agent worked" in said[0] and "send your message again" in said[0]
    assert "failed unexpectedly" not in "".join(replies) and "WorkerShutdown" not in "".join(replies)
