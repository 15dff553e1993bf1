"""A worker SIGKILLed inside a removal, between archiving the worktree and removing it: the retried
removal (on the restarted worker) finishes the job, nothing is lost, and a restore afterwards brings
back every change byte for byte."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import asyncpg
import httpx
from temporalio.client import Client

from api.dispatch import start_message
from isolator.settings import Settings
from tests.archives import fingerprint, make_a_mess
from tests.faults.conftest import WorkerProcess, register, wait_for
from tests.gitrepos import worktree_paths

ROUNDS = int(os.environ.get("ISOLATOR_SOAK_ROUNDS", "1"))


async def say(api: httpx.AsyncClient, conversation: str, text: str) -> dict:
    response = await api.post("/test/message", params={"wait": "true"},
                              json={"conversationId": conversation, "message": text})
    assert response.status_code == 200, response.text
    return response.json()["result"]


async def destroyed(db: asyncpg.Pool, environment_id: str, worker: WorkerProcess, seconds: float = 90) -> dict:
    for _ in range(int(seconds * 10)):
        row = await db.fetchrow("SELECT * FROM isolation_environments WHERE id = $1::uuid", environment_id)
        if row["status"] == "destroyed":
            return dict(row)
        await asyncio.sleep(0.1)
    raise AssertionError(f"{environment_id} was not removed:\n{worker.log_text()[-3000:]}")


async def test_killed_between_archive_and_removal_nothing_is_lost(
    worker: WorkerProcess, api: httpx.AsyncClient, temporal: Client, db: asyncpg.Pool,
    settings: Settings, repo: Path, tmp_path: Path,
) -> None:
    worker.extra_env["MAX_WORKTREES_PER_CODEBASE"] = "1000"
    worker.start()
    await register(api, repo)
    for round_number in range(ROUNDS):
        conversation, marker = f"mid-archive-{round_number}", tmp_path / f"archived-{round_number}"
        created = await say(api, conversation, "work on it")
        path, branch = Path(created["workingPath"]), created["branch"]
        make_a_mess(path)
        before = fingerprint(path)
        worker.stop()
        worker.start(ISOLATOR_FAULT_PAUSE="archive:after", ISOLATOR_FAULT_MARKER=str(marker))

        closing = await start_message(settings, temporal, platform="test", conversation_id=conversation, text="",
                                      message_key=f"{conversation}:closed", kind="closed")
        await closing.result()
        await wait_for(marker, worker)
        assert path.exists(), "stopped after the archive, before the removal"
        worker.kill()
        worker.start()

        row = await destroyed(db, created["environmentId"], worker)
        assert not path.exists() and str(path) not in worktree_paths(repo)
        assert row["archive_ref"] == f"refs/isolator/archive/{created['environmentId']}"
        restored = await say(api, conversation, f"/worktree restore {branch}")
        assert restored["replies"][0].startswith(f"Restored `{branch}` at `{path}`"), restored
        assert fingerprint(path) == before
        await say(api, conversation, "/worktree remove --force")
