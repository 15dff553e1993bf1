"""PostgreSQL SIGKILLed (the postmaster and every backend at once, as when its machine loses power)
while 20 messages are in flight, creates, reuses and commands mixed, then restarted: every message
ends exactly once, with one worktree per identity, each reply once, and no row half-made."""

from __future__ import annotations

import asyncio
import os
import signal
from collections import Counter
from pathlib import Path

import httpx
import psutil
from temporalio.client import Client

from activities.database import create_pool
from api.app import create_app
from isolator.settings import Settings
from migrations.runner import apply_migrations
from tests.faults.conftest import WorkerProcess, register
from tests.gitrepos import first_replies, worktree_paths
from workers.postgres import EmbeddedPostgres, start_embedded_postgres
from workflows.chat.agent_texts import no_agent
from workflows.message import MessageWorkflow
from workflows.naming import thread_branch

ROUNDS = int(os.environ.get("ISOLATOR_SOAK_ROUNDS", "1"))
EXISTING = [f"existing-{number}" for number in range(5)]
# 20 messages: 8 new conversations, 7 messages of existing ones, 5 commands
MESSAGES = ([(f"new-{number}", "go") for number in range(8)] + [(EXISTING[n % 5], "more") for n in range(7)]
            + [(EXISTING[n], "/status") for n in range(5)])


def kill_postgres(pgdata: Path) -> None:
    master = psutil.Process(int((pgdata / "postmaster.pid").read_text().split()[0]))
    processes = [master, *master.children(recursive=True)]
    for process in processes:
        process.send_signal(signal.SIGKILL)
    psutil.wait_procs(processes, timeout=10)


async def test_messages_in_flight_survive_a_postgres_sigkill_once_each(
    settings: Settings, temporal: Client, repo: Path, tmp_path: Path
) -> None:
    pgdata = tmp_path / "pg" / "data"
    postgres: EmbeddedPostgres = await start_embedded_postgres(pgdata)
    await apply_migrations(postgres.url)
    settings = settings.model_copy(update={"database_url": postgres.url})
    worker = WorkerProcess(settings, tmp_path, extra_env={"MAX_WORKTREES_PER_CODEBASE": "1000"})
    pool = await create_pool(postgres.url)
    transport = httpx.ASGITransport(app=create_app(settings, temporal=temporal, pool=pool))
    try:
        worker.start()
        async with httpx.AsyncClient(transport=transport, base_url="http://isolator.test", timeout=60) as api:
            await register(api, repo)
            for conversation in EXISTING:
                created = await api.post("/test/message", params={"wait": "true"},
                                         json={"conversationId": conversation, "message": "start"})
                assert created.json()["result"]["outcome"] == "created"
                # No agent is configured: the conversation's first message says so, once, after the
                # worktree's line.
                assert created.json()["result"]["replies"] == first_replies(
                    thread_branch(f"test:{conversation}"), repo), created.json()
            for round_number in range(ROUNDS):
                suffix = f"-{round_number}"
                sent = await asyncio.gather(*(
                    api.post("/test/message", json={
                        "conversationId": conversation if conversation in EXISTING else conversation + suffix,
                        "message": text})
                    for conversation, text in MESSAGES))
                await asyncio.sleep(0.05)  # in flight: recording conversations, creating worktrees, replying
                kill_postgres(pgdata)
                await postgres.stop()  # forgets the dead server's handle
                await asyncio.sleep(1)
                postgres = await start_embedded_postgres(pgdata)

                handles = [temporal.get_workflow_handle_for(MessageWorkflow.run, response.json()["workflowId"])
                           for response in sent]
                results = await asyncio.wait_for(asyncio.gather(*(handle.result() for handle in handles)), 180)
                outcomes = Counter(result.outcome for result in results)
                assert outcomes == {"created": 8, "reused": 7, "command": 5}, (outcomes, worker.log_text()[-3000:])
                for (conversation, text), result in zip(MESSAGES, results):
                    # A new conversation: the worktree's line and the no-agent notice; a reuse is silent.
                    expected = {"go": 2, "/status": 1}.get(text, 0)
                    assert len(result.replies) == expected, (conversation, text, result)
                    if text == "go":
                        assert result.replies[1] == no_agent(), (conversation, result)
        await pool.close()
        pool = await create_pool(postgres.url)
        rows = await pool.fetch("SELECT working_path, workflow_id FROM isolation_environments WHERE status = 'active'")
        assert len(rows) == len(EXISTING) + 8 * ROUNDS, "one environment per identity"
        assert len({row["workflow_id"] for row in rows}) == len(rows)
        assert sorted(worktree_paths(repo)) == sorted(row["working_path"] for row in rows), "no worktree half-made"
        unattached = await pool.fetchval(
            "SELECT count(*) FROM conversations WHERE environment_id IS NULL AND platform_conversation_id <> ''")
        assert unattached == 0, "every conversation works in its environment"
        replies = await pool.fetch(
            "SELECT platform_conversation_id AS conversation, count(*) AS sent FROM outbound_messages "
            "WHERE status = 'sent' GROUP BY 1")
        per_conversation = {row["conversation"]: row["sent"] for row in replies}
        for conversation in EXISTING:  # its creation's reply, the no-agent notice, and one per /status of each round
            assert per_conversation[conversation] == 2 + ROUNDS, (conversation, per_conversation)
        for round_number in range(ROUNDS):
            for number in range(8):  # its creation's reply and the no-agent notice
                assert per_conversation[f"new-{number}-{round_number}"] == 2
        assert await pool.fetchval("SELECT count(*) FROM outbound_messages WHERE status <> 'sent'") == 0
    finally:
        worker.stop()
        await pool.close()
        await postgres.stop()
