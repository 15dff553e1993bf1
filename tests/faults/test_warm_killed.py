"""A worker SIGKILLed in the middle of a warm claim, and in the middle of a refill, then restarted:
nothing half-made, nothing lost, no worktree handed out twice (docs/warm.md)."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import asyncpg
import httpx
from temporalio.client import Client

from isolator.contracts.message import Resolution
from isolator.settings import Settings
from tests.faults.conftest import WorkerProcess, register, wait_for
from tests.gitrepos import branches, git, worktree_paths
from workflows.chat.agent_texts import no_agent
from workflows.message import MessageWorkflow

SETUP = '[setup]\ncommands = ["echo run >> setup-runs.txt"]\n'


def with_setup(repo: Path) -> None:
    (repo / ".isolator.toml").write_text(SETUP)
    (repo / ".gitignore").write_text("setup-runs.txt\n")
    git("add", ".", cwd=repo)
    git("commit", "-q", "-m", "set-up", cwd=repo)


async def pool_settles(db: asyncpg.Pool, codebase_id: str, worker: WorkerProcess, seconds: float = 120) -> list:
    """One ready warm worktree and nothing else, then its row."""
    for _ in range(int(seconds * 10)):
        rows = await db.fetch("SELECT * FROM warm_worktrees WHERE codebase_id = $1", uuid.UUID(codebase_id))
        if len(rows) == 1 and rows[0]["state"] == "ready":
            return rows
        await asyncio.sleep(0.1)
    raise AssertionError(f"the pool did not settle: {rows}\n{worker.log_text()[-3000:]}")


def nothing_half_made(settings: Settings, repo: Path, warm: list, environments: list[str]) -> None:
    """On disk and in git: the environments' worktrees and the pool's, nothing else."""
    warm_folder = settings.worktree_base.resolve() / ".warm" / "project"
    assert sorted(str(path) for path in warm_folder.iterdir()) == sorted(row["path"] for row in warm)
    assert sorted(worktree_paths(repo)) == sorted([*environments, *(row["path"] for row in warm)])
    for row in warm:
        assert (Path(row["path"]) / "setup-runs.txt").read_text() == "run\n"


async def test_a_worker_killed_during_a_claim_leaves_one_worktree_claimed_once(
    worker: WorkerProcess, api: httpx.AsyncClient, temporal: Client, db: asyncpg.Pool, settings: Settings,
    repo: Path, tmp_path: Path,
) -> None:
    with_setup(repo)
    worker.extra_env["WARM_WORKTREES"] = "1"
    worker.start()
    codebase = await register(api, repo)
    worker.stop()
    marker = tmp_path / "paused"
    worker.start(ISOLATOR_FAULT_PAUSE="warm_claim:before", ISOLATOR_FAULT_MARKER=str(marker))
    [warm] = await pool_settles(db, codebase["id"], worker)

    response = await api.post("/test/message", json={"conversationId": "claim-crash", "message": "go"})
    assert response.status_code == 200, response.text
    await wait_for(marker, worker)  # moved into place; git not told, no branch yet
    worker.kill()
    worker.start()

    handle = temporal.get_workflow_handle_for(MessageWorkflow.run, response.json()["workflowId"])
    result: Resolution = await handle.result()
    assert result.outcome == "created", worker.log_text()[-3000:]
    worktree = Path(result.working_path)
    assert git("rev-parse", "--abbrev-ref", "HEAD", cwd=worktree).strip() == result.branch
    assert (worktree / ".git").read_text().strip().endswith(Path(warm["path"]).name), "the warm one, claimed"
    assert (worktree / "setup-runs.txt").read_text() == "run\n"
    assert sorted(branches(repo)) == sorted(["main", result.branch])
    refilled = await pool_settles(db, codebase["id"], worker)
    assert refilled[0]["path"] != warm["path"]
    nothing_half_made(settings, repo, refilled, [result.working_path])
    rows = await db.fetch("SELECT working_path FROM isolation_environments WHERE status = 'active'")
    assert [row["working_path"] for row in rows] == [result.working_path]
    replies = [row["body"] for row in await db.fetch(
        "SELECT body FROM outbound_messages WHERE platform_conversation_id = 'claim-crash' ORDER BY id")]
    # The worktree's line, then (no agent being configured) the notice: each once.
    assert len(replies) == 2 and result.branch in replies[0] and replies[1] == no_agent(), replies


async def test_a_worker_killed_during_a_refill_leaves_a_whole_pool(
    worker: WorkerProcess, api: httpx.AsyncClient, temporal: Client, db: asyncpg.Pool, settings: Settings,
    repo: Path, tmp_path: Path,
) -> None:
    with_setup(repo)
    marker = tmp_path / "paused"
    worker.extra_env["WARM_WORKTREES"] = "1"
    worker.start(ISOLATOR_FAULT_PAUSE="warm_refill:before", ISOLATOR_FAULT_MARKER=str(marker))
    codebase = await register(api, repo)
    await api.patch(f"/api/codebases/{codebase['id']}", json={"warm_worktrees": 1})  # starts the pool
    await wait_for(marker, worker)  # a warm worktree made, its set-up not run
    worker.kill()
    worker.start()

    [warm] = await pool_settles(db, codebase["id"], worker)
    nothing_half_made(settings, repo, [warm], [])
    response = await api.post("/test/message", json={"conversationId": "after-refill-crash", "message": "go"})
    handle = temporal.get_workflow_handle_for(MessageWorkflow.run, response.json()["workflowId"])
    result: Resolution = await handle.result()
    assert result.outcome == "created"
    assert (Path(result.working_path) / ".git").read_text().strip().endswith(Path(warm["path"]).name)
    refilled = await pool_settles(db, codebase["id"], worker)
    nothing_half_made(settings, repo, refilled, [result.working_path])
