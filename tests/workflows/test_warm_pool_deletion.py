"""Deleting a codebase ends its warm pool: the pool workflow completes, and its warm worktrees are gone from
the disk, from git's list and from the database. A refill that keeps failing is given up after a few
attempts, with a line in the worker's log. Real git, PostgreSQL and Temporal."""

from __future__ import annotations

import asyncio
import logging
import shutil
import uuid
from pathlib import Path

import pytest
from temporalio.client import WorkflowExecutionStatus

from activities.warm.refill import WarmRefillActivities
from isolator.settings import Settings
from tests.conftest import Stack
from tests.gitrepos import worktree_paths
from tests.workflows.test_warm_pool import pool_settles


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"warm_worktrees": 1})


async def pool_status(stack: Stack, codebase_id: str, seconds: float = 60) -> WorkflowExecutionStatus | None:
    """The pool workflow's status once it no longer runs."""
    handle = stack.temporal.get_workflow_handle(f"warm-pool:{codebase_id}")
    for _ in range(int(seconds * 10)):
        status = (await handle.describe()).status
        if status != WorkflowExecutionStatus.RUNNING:
            return status
        await asyncio.sleep(0.1)
    raise AssertionError(f"warm-pool:{codebase_id} still runs {seconds} s after its codebase was deleted")


async def test_deleting_a_codebase_ends_its_pool_and_removes_its_warm_worktrees(stack: Stack, repo: Path) -> None:
    codebase = await stack.register(repo)
    [warm] = await pool_settles(stack, codebase["id"], ready=1)
    assert worktree_paths(repo) == [warm["path"]]

    deleted = await stack.api.delete(f"/api/codebases/{codebase['id']}")

    assert deleted.status_code == 204
    assert await pool_status(stack, codebase["id"]) == WorkflowExecutionStatus.COMPLETED
    assert not Path(warm["path"]).exists()
    assert worktree_paths(repo) == []
    assert await stack.db.fetchval("SELECT count(*) FROM warm_worktrees WHERE codebase_id = $1",
                                   uuid.UUID(codebase["id"])) == 0
    assert (await stack.api.get(f"/api/codebases/{codebase['id']}")).status_code == 404


async def test_a_deleted_codebase_whose_checkout_is_gone_still_loses_its_warm_worktrees(
        stack: Stack, repo: Path) -> None:
    codebase = await stack.register(repo)
    [warm] = await pool_settles(stack, codebase["id"], ready=1)
    shutil.rmtree(repo)

    assert (await stack.api.delete(f"/api/codebases/{codebase['id']}")).status_code == 204

    assert await pool_status(stack, codebase["id"]) == WorkflowExecutionStatus.COMPLETED
    assert not Path(warm["path"]).exists()


async def test_a_codebase_registered_again_under_its_name_keeps_its_new_pool(stack: Stack, repo: Path) -> None:
    """The old pool's clean-up leaves the new codebase's warm worktrees (same name, same folder) alone."""
    old = await stack.register(repo)
    await pool_settles(stack, old["id"], ready=1)
    assert (await stack.api.delete(f"/api/codebases/{old['id']}")).status_code == 204
    new = await stack.register(repo)
    assert new["name"] == old["name"] and new["id"] != old["id"]

    assert await pool_status(stack, old["id"]) == WorkflowExecutionStatus.COMPLETED
    [warm] = await pool_settles(stack, new["id"], ready=1)
    assert Path(warm["path"]).is_dir() and worktree_paths(repo) == [warm["path"]]


async def test_a_refill_that_keeps_failing_is_given_up_with_a_log_line_and_the_pool_goes_on(
        stack: Stack, repo: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    caplog.set_level(logging.WARNING)

    async def broken(self: WarmRefillActivities, request: object) -> None:
        raise RuntimeError("the database is on fire")

    monkeypatch.setattr(WarmRefillActivities, "_refill", broken)
    codebase = await stack.register(repo)
    handle = stack.temporal.get_workflow_handle(f"warm-pool:{codebase['id']}")

    said = "warm pool of project: the refill failed 5 times"
    for _ in range(600):
        if any(said in record.getMessage() for record in caplog.records):
            break
        await asyncio.sleep(0.1)
    [line] = [record.getMessage() for record in caplog.records if said in record.getMessage()]
    assert "the database is on fire" in line and "tried again in 60 s" in line
    assert (await handle.describe()).status == WorkflowExecutionStatus.RUNNING, "it looks again later"
