"""Eager Workflow Start: the API process hosts the shared queue's worker, so a message workflow's first
task comes back in the start answer; the worker processes (here: another client, as on another host)
still do the git work, and an API without the hosted worker still works. Real Temporal, PostgreSQL, git."""

from __future__ import annotations

import socket
from pathlib import Path

import asyncpg
import httpx
from temporalio.client import Client

from api.app import create_app
from isolator.payloads import connect
from isolator.settings import Settings, load_settings
from tests.gitrepos import worktree_paths
from workers.api_process import hosted_worker
from workers.worker import host_worker, running_workers


async def started_eagerly(temporal: Client, workflow_id: str) -> bool:
    """The first workflow task was started in the start request itself: in the same transaction as its
    scheduling (consecutive task ids), not by a later poll."""
    history = await temporal.get_workflow_handle(workflow_id).fetch_history()
    scheduled, started = history.events[1], history.events[2]
    assert scheduled.HasField("workflow_task_scheduled_event_attributes")
    assert started.HasField("workflow_task_started_event_attributes")
    return started.task_id == scheduled.task_id + 1


async def say(api: httpx.AsyncClient, conversation: str) -> dict:
    response = await api.post("/test/message", params={"wait": "true"},
                              json={"conversationId": conversation, "message": "hello"})
    assert response.status_code == 200, response.text
    return response.json()


async def test_the_api_process_starts_messages_eagerly_and_a_worker_elsewhere_does_the_git_work(
    settings: Settings, db: asyncpg.Pool, temporal: Client, repo: Path, tmp_path: Path,
) -> None:
    here = settings.model_copy(update={"host": socket.gethostname()})  # the API runs on its ISOLATOR_HOST
    elsewhere = load_settings(
        database_url=settings.database_url, temporal_address=settings.temporal_address, data_dir=tmp_path / "b",
        worktree_base_setting=tmp_path / "b-worktrees", workspace_path_setting=tmp_path / "b-workspace",
        host=f"{settings.host}-b", task_queue=settings.task_queue,
    )
    worker_client = await connect(settings.temporal_address, settings.temporal_namespace)  # another process's
    # The API's hosted worker is the only one on the shared queue; the other host's worker does its git work.
    async with host_worker(worker_client, db, elsewhere), hosted_worker(temporal, db, here) as hosted:
        assert hosted is not None
        transport = httpx.ASGITransport(app=create_app(here, temporal=temporal, pool=db))
        async with httpx.AsyncClient(transport=transport, base_url="http://isolator.test", timeout=60) as api:
            registered = await api.post("/api/codebases", json={"path": str(repo), "host": elsewhere.host})
            assert registered.status_code == 201, registered.text
            created = await say(api, "eager-1")
            reused = await say(api, "eager-1")

    assert created["result"]["outcome"] == "created" and reused["result"]["outcome"] == "reused"
    assert Path(created["result"]["workingPath"]).is_relative_to(elsewhere.worktree_base.resolve())
    assert created["result"]["workingPath"] in worktree_paths(repo)
    assert await started_eagerly(temporal, created["workflowId"])
    assert await started_eagerly(temporal, reused["workflowId"])


async def test_without_the_hosted_worker_messages_start_as_before(
    settings: Settings, db: asyncpg.Pool, temporal: Client, repo: Path,
) -> None:
    worker_client = await connect(settings.temporal_address, settings.temporal_namespace)
    settings = settings.model_copy(update={"eager_start": False})
    async with running_workers(worker_client, db, settings), hosted_worker(temporal, db, settings):
        transport = httpx.ASGITransport(app=create_app(settings, temporal=temporal, pool=db))
        async with httpx.AsyncClient(transport=transport, base_url="http://isolator.test", timeout=60) as api:
            assert (await api.post("/api/codebases", json={"path": str(repo)})).status_code == 201
            created = await say(api, "plain-1")

    assert created["result"]["outcome"] == "created"
    assert not await started_eagerly(temporal, created["workflowId"])


async def test_an_api_on_a_machine_that_is_not_its_host_hosts_no_worker(
    settings: Settings, db: asyncpg.Pool, temporal: Client,
) -> None:
    assert settings.host != socket.gethostname()
    async with hosted_worker(temporal, db, settings) as hosted:
        assert hosted is None, "its every look at the disk would go to the host's queue"
