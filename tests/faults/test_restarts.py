"""The stores restarted under a running worker process: PostgreSQL while messages are in flight, and
the Temporal dev server (with its state file) while an environment waits for its close."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
from temporalio.client import Client

from activities.database import create_pool
from api.app import create_app
from api.dispatch import dispatch_message
from isolator.contracts.message import MessageInput
from isolator.payloads import connect
from isolator.settings import Settings
from migrations.runner import apply_migrations
from tests.conftest import free_port
from tests.faults.conftest import WorkerProcess, register
from tests.gitrepos import first_replies, worktree_paths
from workers.postgres import start_embedded_postgres
from workers.temporal_server import start_dev_server
from workflows.message import MessageWorkflow

CONVERSATIONS = [f"restart-{number}" for number in range(8)]


async def test_messages_in_flight_survive_a_postgres_restart_once_each(
    settings: Settings, temporal: Client, repo: Path, tmp_path: Path
) -> None:
    pgdata = tmp_path / "pg" / "data"
    postgres = await start_embedded_postgres(pgdata)
    await apply_migrations(postgres.url)
    settings = settings.model_copy(update={"database_url": postgres.url})
    worker = WorkerProcess(settings, tmp_path)
    pool = await create_pool(postgres.url)
    try:
        worker.start()
        transport = httpx.ASGITransport(app=create_app(settings, temporal=temporal, pool=pool))
        async with httpx.AsyncClient(transport=transport, base_url="http://isolator.test", timeout=60) as api:
            await register(api, repo)
            sent = [await api.post("/test/message", json={"conversationId": name, "message": "go"})
                    for name in CONVERSATIONS]
        await pool.close()
        await postgres.stop()  # while the workflows record conversations, create worktrees, record rows
        await asyncio.sleep(3)
        postgres = await start_embedded_postgres(pgdata)

        handles = [temporal.get_workflow_handle_for(MessageWorkflow.run, response.json()["workflowId"])
                   for response in sent]
        results = await asyncio.wait_for(asyncio.gather(*(handle.result() for handle in handles)), 120)
        assert [result.outcome for result in results] == ["created"] * len(CONVERSATIONS), worker.log_text()[-3000:]

        pool = await create_pool(postgres.url)
        rows = await pool.fetch("SELECT working_path FROM isolation_environments WHERE status = 'active'")
        assert sorted(row["working_path"] for row in rows) == sorted(result.working_path for result in results)
        assert sorted(worktree_paths(repo)) == sorted(result.working_path for result in results)
        replies = await pool.fetch(
            """SELECT platform_conversation_id AS conversation, count(*) AS sent FROM outbound_messages
               WHERE status = 'sent' GROUP BY 1 ORDER BY 1"""
        )
        # Each conversation: the worktree's line, then (no agent being configured) the notice, once each.
        assert [(row["conversation"], row["sent"]) for row in replies] == [(name, 2) for name in sorted(CONVERSATIONS)]
        for result in results:
            assert result.replies == first_replies(result.branch or "", repo), result
    finally:
        worker.stop()
        await pool.close()
        await postgres.stop()


async def test_a_close_after_a_temporal_restart_still_removes_the_worktree(
    settings: Settings, db, repo: Path, tmp_path: Path
) -> None:
    """Two environments wait in the state file across the restart: one is closed by its platform (the
    close event), the other removed by `/worktree remove`; both worktrees go."""
    port, state = free_port(), tmp_path / "temporal.db"

    async def start_temporal():
        return await start_dev_server(port=port, ui_port=None, db_file=state, log_path=tmp_path / "temporal.log")

    server = await start_temporal()
    settings = settings.model_copy(update={"temporal_address": server.address})

    def api_for(client: Client) -> httpx.AsyncClient:
        transport = httpx.ASGITransport(app=create_app(settings, temporal=client, pool=db))
        return httpx.AsyncClient(transport=transport, base_url="http://isolator.test", timeout=90)

    worker = WorkerProcess(settings, tmp_path)
    try:
        worker.start()
        client = await connect(server.address)
        paths = {}
        async with api_for(client) as api:
            await register(api, repo)
            for conversation in ("closed-by-platform", "removed-by-command"):
                created = await api.post("/test/message", params={"wait": "true"},
                                         json={"conversationId": conversation, "message": "go"})
                paths[conversation] = Path(created.json()["result"]["workingPath"])
        assert all(path.is_dir() for path in paths.values())

        await server.stop()
        server = await start_temporal()  # the environment workflows wait in the state file

        client = await connect(server.address)
        close = MessageInput(platform="test", conversation_id="closed-by-platform", text="",
                             message_key="close-after-restart", default_host=settings.host, kind="closed")
        closed = await (await dispatch_message(client, settings.task_queue, close)).result()
        assert closed.outcome == "closed"
        async with api_for(client) as api:
            removed = await api.post("/test/message", params={"wait": "true"},
                                     json={"conversationId": "removed-by-command", "message": "/worktree remove"})
            assert removed.status_code == 200, removed.text
        for path in paths.values():
            for _ in range(300):
                status = await db.fetchval("SELECT status FROM isolation_environments WHERE working_path = $1",
                                           str(path))
                if not path.exists() and status == "destroyed":
                    break
                await asyncio.sleep(0.1)
            assert not path.exists(), worker.log_text()[-3000:]
            assert status == "destroyed"
        assert worktree_paths(repo) == []
    finally:
        worker.stop()
        await server.stop()
