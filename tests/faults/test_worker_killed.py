"""A worker killed with SIGKILL at a known point of a message, then restarted: the message completes
once, with one worktree, one row and one reply, and nothing half-made left behind."""

from __future__ import annotations

from pathlib import Path

import asyncpg
import httpx
import pytest
from temporalio.client import Client

from isolator.contracts.message import Resolution
from isolator.settings import Settings
from tests.faults.conftest import WorkerProcess, register, wait_for
from tests.gitrepos import branches, worktree_paths
from workflows.message import MessageWorkflow


@pytest.mark.parametrize(
    "pause",
    [
        "create_worktree_here:before",
        "create_worktree_here:after",  # the worktree is on disk, Temporal has not heard of it
        "record_environment:after",  # the row is written, the workflow task is lost with the worker
        "send_reply:after",  # the reply is logged as sent, the activity's completion is lost
    ],
)
async def test_a_killed_worker_leaves_one_worktree_one_row_and_one_reply(
    pause: str, worker: WorkerProcess, api: httpx.AsyncClient, temporal: Client, db: asyncpg.Pool,
    settings: Settings, repo: Path, tmp_path: Path,
) -> None:
    marker = tmp_path / "paused"
    worker.start()
    codebase = await register(api, repo)
    worker.stop()
    worker.start(ISOLATOR_FAULT_PAUSE=pause, ISOLATOR_FAULT_MARKER=str(marker))

    response = await api.post("/test/message", json={"conversationId": "crash", "message": "fix the login"})
    assert response.status_code == 200, response.text
    await wait_for(marker, worker)
    worker.kill()
    worker.start()

    handle = temporal.get_workflow_handle_for(MessageWorkflow.run, response.json()["workflowId"])
    result: Resolution = await handle.result()
    # Killed after its row was written, the retried decision finds that row by identity and attaches.
    assert result.outcome in ("created", "attached"), (result, worker.log_text()[-3000:])

    project = settings.worktree_base.resolve() / codebase["name"]
    assert worktree_paths(repo) == [result.working_path]
    assert sorted(entry.name for entry in project.iterdir()) == [Path(result.working_path).name]
    assert sorted(branches(repo)) == sorted(["main", result.branch])
    rows = await db.fetch("SELECT working_path FROM isolation_environments WHERE status = 'active'")
    assert [row["working_path"] for row in rows] == [result.working_path]
    replies = await db.fetch(
        "SELECT body, status FROM outbound_messages WHERE platform_conversation_id = 'crash' ORDER BY id"
    )
    assert len(replies) == 1 and replies[0]["status"] == "sent", replies
    assert result.branch in replies[0]["body"]
