"""The Temporal dev server SIGKILLed in the middle of a create, and in the middle of an environment's
removal, then restarted from its state file: the create finishes once; the removal finishes (or is
retried) and never happens twice or half."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import asyncpg
import httpx
import pytest
from temporalio.client import Client

from api.app import create_app
from isolator.payloads import connect
from isolator.settings import Settings
from tests.conftest import free_port
from tests.faults.conftest import WorkerProcess, register, wait_for
from tests.gitrepos import branches, worktree_paths
from workers.temporal_server import TemporalDevServer, start_dev_server
from workflows.chat.agent_texts import no_agent
from workflows.environment import EnvironmentWorkflow
from workflows.message import MessageWorkflow

ROUNDS = int(os.environ.get("ISOLATOR_SOAK_ROUNDS", "1"))


class RestartableTemporal:
    def __init__(self, tmp_path: Path) -> None:
        self.port, self.state, self.log = free_port(), tmp_path / "temporal.db", tmp_path / "temporal.log"
        self.server: TemporalDevServer | None = None

    async def start(self) -> str:
        self.server = await start_dev_server(port=self.port, ui_port=None, db_file=self.state, log_path=self.log)
        return self.server.address

    async def kill_and_restart(self) -> None:
        """SIGKILL: no shutdown, its state file as the last write left it; then started from it."""
        assert self.server is not None
        self.server.process.kill()
        await asyncio.to_thread(self.server.process.wait)
        await self.start()

    async def stop(self) -> None:
        if self.server is not None:
            await self.server.stop()


@pytest.fixture
async def restartable(tmp_path: Path):  # type: ignore[no-untyped-def]
    server = RestartableTemporal(tmp_path)
    await server.start()
    yield server
    await server.stop()


def api_for(settings: Settings, client: Client, db: asyncpg.Pool) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=create_app(settings, temporal=client, pool=db))
    return httpx.AsyncClient(transport=transport, base_url="http://isolator.test", timeout=120)


async def paused_at(pause: str, settings: Settings, tmp_path: Path, attempt: int) -> tuple[WorkerProcess, Path, Path]:
    marker, release = tmp_path / f"paused-{attempt}", tmp_path / f"release-{attempt}"
    worker = WorkerProcess(settings, tmp_path / f"logs-{attempt}")
    worker.logs.mkdir()
    worker.start(ISOLATOR_FAULT_PAUSE=pause, ISOLATOR_FAULT_MARKER=str(marker), ISOLATOR_FAULT_RELEASE=str(release))
    return worker, marker, release


async def test_a_create_cut_by_a_temporal_sigkill_finishes_once(
    restartable: RestartableTemporal, settings: Settings, db: asyncpg.Pool, repo: Path, tmp_path: Path
) -> None:
    settings = settings.model_copy(update={"temporal_address": f"127.0.0.1:{restartable.port}"})
    for attempt in range(ROUNDS):
        worker, marker, release = await paused_at("create_worktree_here:after", settings, tmp_path, attempt)
        try:
            async with api_for(settings, await connect(settings.temporal_address), db) as api:
                await register(api, repo)
                sent = await api.post("/test/message", json={"conversationId": f"cut-{attempt}", "message": "go"})
            await wait_for(marker, worker)  # the worktree is on disk; Temporal has not heard of it
            await restartable.kill_and_restart()
            release.touch()
            client = await connect(settings.temporal_address)
            result = await asyncio.wait_for(
                client.get_workflow_handle_for(MessageWorkflow.run, sent.json()["workflowId"]).result(), 120)
            assert result.outcome in ("created", "attached"), (result, worker.log_text()[-3000:])
            rows = await db.fetch("SELECT working_path FROM isolation_environments WHERE status = 'active' "
                                  "AND working_path = $1", result.working_path)
            assert len(rows) == 1
            assert result.working_path in worktree_paths(repo) and result.branch in branches(repo)
            replies = [row["body"] for row in await db.fetch(
                "SELECT body FROM outbound_messages WHERE platform_conversation_id = $1 ORDER BY id", f"cut-{attempt}")]
            # The worktree's line, then (no agent being configured) the notice: each once.
            assert len(replies) == 2 and result.branch in replies[0] and replies[1] == no_agent(), replies
            assert result.replies == replies, result
        finally:
            worker.stop()
    assert len(worktree_paths(repo)) == ROUNDS, "one worktree per conversation, none half-made"


async def test_a_removal_cut_by_a_temporal_sigkill_happens_once_and_whole(
    restartable: RestartableTemporal, settings: Settings, db: asyncpg.Pool, repo: Path, tmp_path: Path
) -> None:
    settings = settings.model_copy(update={"temporal_address": f"127.0.0.1:{restartable.port}"})
    for attempt in range(ROUNDS):
        conversation = f"removed-{attempt}"
        worker, marker, release = await paused_at("remove_worktree:after", settings, tmp_path, attempt)
        try:
            async with api_for(settings, await connect(settings.temporal_address), db) as api:
                await register(api, repo)
                created = await api.post("/test/message", params={"wait": "true"},
                                         json={"conversationId": conversation, "message": "go"})
                result = created.json()["result"]
                removing = asyncio.create_task(api.post(
                    "/test/message", params={"wait": "true"},
                    json={"conversationId": conversation, "message": "/worktree remove"}))
                await wait_for(marker, worker)  # the worktree is gone from disk; the report not yet returned
                await restartable.kill_and_restart()
                release.touch()
                removing.cancel()  # its client spoke to the server that was killed
            client = await connect(settings.temporal_address)
            environment = client.get_workflow_handle_for(EnvironmentWorkflow.run, f"environment:{result['environmentId']}")
            report = await asyncio.wait_for(environment.result(), 120)
            assert report.outcome in ("removed", "already_gone"), (report, worker.log_text()[-3000:])
            assert result["workingPath"] not in worktree_paths(repo)
            assert not Path(result["workingPath"]).exists()
            assert await db.fetchval("SELECT status FROM isolation_environments WHERE working_path = $1",
                                     result["workingPath"]) == "destroyed"
            assert result["replies"][1:] == [no_agent()], result  # said with the creation, no agent being configured
            for _ in range(200):  # the command's answer, once
                replies = await db.fetch("SELECT body FROM outbound_messages WHERE platform_conversation_id = $1 "
                                         "ORDER BY id", conversation)
                if len(replies) == 3:
                    break
                await asyncio.sleep(0.05)
            assert [r["body"] for r in replies[:2]] == result["replies"], [r["body"] for r in replies]
            assert len(replies) == 3 and "removed" in replies[2]["body"].lower(), [r["body"] for r in replies]
        finally:
            worker.stop()
