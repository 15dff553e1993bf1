"""claim_warm_worktree and refill_warm_pool on a real repository and PostgreSQL, without Temporal: what
is claimed, what is made as before, and how a refill brings the pool back."""

from __future__ import annotations

from pathlib import Path

import asyncpg
import pytest
from temporalio.testing import ActivityEnvironment

from activities.warm.pool import WarmPoolActivities
from activities.warm.refill import WarmRefillActivities
from isolator.contracts.codebase import Codebase
from isolator.contracts.warm import WarmPoolInput
from isolator.contracts.worktree import WorktreeRequest
from isolator.settings import Settings
from tests.gitrepos import branches, git, worktree_paths


@pytest.fixture
async def codebase(db: asyncpg.Pool, repo: Path, settings: Settings) -> Codebase:
    row = await db.fetchrow("INSERT INTO codebases (name, canonical_path, default_branch, host, warm_worktrees) "
                            "VALUES ('project', $1, 'main', $2, 1) RETURNING id", str(repo), settings.host)
    return Codebase(id=str(row["id"]), name="project", canonical_path=str(repo), default_branch="main",
                    host=settings.host)


async def test_only_a_new_branch_from_the_default_base_claims_and_a_refill_makes_another(
    db: asyncpg.Pool, settings: Settings, repo: Path, codebase: Codebase,
) -> None:
    environment = ActivityEnvironment()
    refill = WarmRefillActivities(db, settings)
    claims = WarmPoolActivities(db, settings)
    report = await environment.run(refill.refill_warm_pool, WarmPoolInput(codebase))
    assert (report.made, report.ready) == (1, 1)
    [warm] = await db.fetch("SELECT path FROM warm_worktrees")

    for refused in (WorktreeRequest(codebase, "pr-head", source="pr_branch"),
                    WorktreeRequest(codebase, "pr-99-review", source="pr_fork", head_sha="0" * 40)):
        assert (await environment.run(claims.claim_warm_worktree, refused)).outcome == "none"
    git("branch", "thread-existing", cwd=repo)
    existing = await environment.run(claims.claim_warm_worktree, WorktreeRequest(codebase, "thread-existing"))
    assert existing.outcome == "none" and existing.reason == "the branch or its folder exists already"
    assert await db.fetchval("SELECT state FROM warm_worktrees") == "ready", "left in the pool"

    claimed = await environment.run(claims.claim_warm_worktree, WorktreeRequest(codebase, "thread-new"))
    assert claimed.outcome == "claimed" and claimed.worktree is not None
    assert claimed.worktree.path == str(settings.worktree_base / "project" / "thread-new")
    assert not Path(warm["path"]).exists() and "thread-new" in branches(repo)
    assert await db.fetchval("SELECT count(*) FROM warm_worktrees") == 0
    again = await environment.run(claims.claim_warm_worktree, WorktreeRequest(codebase, "thread-other"))
    assert again.outcome == "none" and again.reason == "the pool is empty, refilling"

    report = await environment.run(refill.refill_warm_pool, WarmPoolInput(codebase))
    assert (report.made, report.ready) == (1, 1)
    assert len(worktree_paths(repo)) == 2  # the claimed one and the new warm one
