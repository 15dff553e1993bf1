"""PostgreSQL, or the Temporal dev server, restarted while the agent runs: the run finishes and its
answer arrives, once."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import asyncpg
import httpx
from temporalio.client import Client

from activities.database import create_pool
from api.app import create_app
from isolator.payloads import connect
from isolator.settings import Settings
from migrations.runner import apply_migrations
from tests.agents import command
from tests.conftest import free_port
from tests.faults.conftest import WorkerProcess, register, wait_for
from workers.postgres import start_embedded_postgres
from workers.temporal_server import start_dev_server


async def run_ended(pool: asyncpg.Pool, run_id: str, seconds: float = 90) -> str:
    for _ in range(int(seconds * 10)):
        status = await pool.fetchval("SELECT status FROM agent_runs WHERE id = $1", uuid.UUID(run_id))
        if status not in ("queued", "running"):
            return status
        await asyncio.sleep(0.1)
    raise AssertionError(f"run {run_id} did not end")


async def answers(pool: asyncpg.Pool, conversation: str) -> list[str]:
    rows = await pool.fetch("SELECT body FROM outbound_messages WHERE platform_conversation_id = $1 "
                            "AND idempotency_key LIKE 'agent-run:%' ORDER BY id", conversation)
    return [row["body"] for row in rows]


async def test_a_run_survives_a_postgres_restart(
    settings: Settings, temporal: Client, repo: Path, tmp_path: Path
) -> None:
    pgdata = tmp_path / "pg" / "data"
    postgres = await start_embedded_postgres(pgdata)
    await apply_migrations(postgres.url)
    runs = tmp_path / "runs.log"
    settings = settings.model_copy(update={"database_url": postgres.url})
    worker = WorkerProcess(settings, tmp_path, extra_env={"AGENT_COMMAND": command("recorder", str(runs), "6")})
    pool = await create_pool(postgres.url)
    try:
        worker.start()
        transport = httpx.ASGITransport(app=create_app(settings, temporal=temporal, pool=pool))
        async with httpx.AsyncClient(transport=transport, base_url="http://isolator.test", timeout=60) as api:
            await register(api, repo)
            created = await api.post("/test/message", params={"wait": "true"},
                                     json={"conversationId": "pg-restart", "message": "survive"})
        run = created.json()["result"]["agentRunId"]
        await wait_for(runs, worker)  # the agent has started
        await pool.close()
        await postgres.stop()
        await asyncio.sleep(3)
        postgres = await start_embedded_postgres(pgdata)
        pool = await create_pool(postgres.url)
        assert await run_ended(pool, run) == "done", worker.log_text()[-3000:]
        final = (await answers(pool, "pg-restart"))[-1]
        assert final.startswith("finished survive") and "— Done in" in final
        assert runs.read_text().count("start survive") == 1
    finally:
        worker.stop()
        await pool.close()
        await postgres.stop()


async def test_a_run_survives_a_temporal_restart(
    settings: Settings, db: asyncpg.Pool, repo: Path, tmp_path: Path
) -> None:
    port, state = free_port(), tmp_path / "temporal.db"

    async def start_temporal():  # type: ignore[no-untyped-def]
        return await start_dev_server(port=port, ui_port=None, db_file=state, log_path=tmp_path / "temporal.log")

    server = await start_temporal()
    runs = tmp_path / "runs.log"
    settings = settings.model_copy(update={"temporal_address": server.address})
    worker = WorkerProcess(settings, tmp_path, extra_env={"AGENT_COMMAND": command("recorder", str(runs), "6")})
    try:
        worker.start()
        client = await connect(server.address)
        transport = httpx.ASGITransport(app=create_app(settings, temporal=client, pool=db))
        async with httpx.AsyncClient(transport=transport, base_url="http://isolator.test", timeout=60) as api:
            await register(api, repo)
            created = await api.post("/test/message", params={"wait": "true"},
                                     json={"conversationId": "temporal-restart", "message": "survive"})
        run = created.json()["result"]["agentRunId"]
        await wait_for(runs, worker)
        await server.stop()
        server = await start_temporal()
        assert await run_ended(db, run) == "done", worker.log_text()[-3000:]
        final = (await answers(db, "temporal-restart"))[-1]
        assert final.startswith("finished survive") and "— Done in" in final
        assert runs.read_text().count("start survive") == 1
    finally:
        worker.stop()
        await server.stop()
