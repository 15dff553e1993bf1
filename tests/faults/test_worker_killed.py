"""A worker killed with SIGKILL at a known point of a message, then restarted: the message completes
once, with one worktree, one row and its replies once each, and nothing half-made left behind."""

from __future__ import annotations

import os
from pathlib import Path

import asyncpg
import httpx
import pytest
from temporalio.client import Client

from isolator.contracts.message import Resolution
from isolator.settings import Settings
from tests.faults.conftest import WorkerProcess, register, wait_for
from tests.gitrepos import branches, worktree_paths
from workflows.chat.agent_texts import no_agent
from workflows.message import MessageWorkflow

ROUNDS = int(os.environ.get("ISOLATOR_SOAK_ROUNDS", "1"))


# Killed just after each activity is tests/faults/test_worker_killed_everywhere.py; here, just before
# the worktree is made, with nothing of it on disk yet.
@pytest.mark.parametrize("pause", ["create_worktree_here:before"])
async def test_a_killed_worker_leaves_one_worktree_one_row_and_one_reply(
    pause: str, worker: WorkerProcess, api: httpx.AsyncClient, temporal: Client, db: asyncpg.Pool,
    settings: Settings, repo: Path, tmp_path: Path,
) -> None:
    worker.extra_env["MAX_WORKTREES_PER_CODEBASE"] = "1000"
    worker.start()
    codebase = await register(api, repo)
    for round_number in range(ROUNDS):
        marker, conversation = tmp_path / f"paused-{round_number}", f"crash-{round_number}"
        worker.stop()
        worker.start(ISOLATOR_FAULT_PAUSE=pause, ISOLATOR_FAULT_MARKER=str(marker))

        response = await api.post("/test/message", json={"conversationId": conversation, "message": "fix the login"})
        assert response.status_code == 200, response.text
        await wait_for(marker, worker)
        worker.kill()
        worker.start()

        handle = temporal.get_workflow_handle_for(MessageWorkflow.run, response.json()["workflowId"])
        result: Resolution = await handle.result()
        # Killed after its row was written, the retried decision finds its own row and finishes the create.
        assert result.outcome == "created", (result, worker.log_text()[-3000:])

        project = settings.worktree_base.resolve() / codebase["name"]
        assert result.working_path in worktree_paths(repo) and len(worktree_paths(repo)) == round_number + 1
        assert len(list(project.iterdir())) == round_number + 1, "no worktree half-made"
        assert result.branch in branches(repo) and len(branches(repo)) == round_number + 2
        rows = await db.fetch("SELECT working_path FROM isolation_environments WHERE status = 'active'")
        assert sorted(row["working_path"] for row in rows) == sorted(worktree_paths(repo))
        replies = await db.fetch(
            "SELECT body, status FROM outbound_messages WHERE platform_conversation_id = $1 ORDER BY id", conversation
        )
        # The worktree's line, then (no agent being configured) the notice: each sent once.
        assert [row["status"] for row in replies] == ["sent", "sent"], replies
        assert result.branch in replies[0]["body"] and replies[1]["body"] == no_agent(), replies
