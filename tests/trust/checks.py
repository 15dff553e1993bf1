"""What the trust tests check of a refused message: it changed nothing, and it can be found."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Stack
from tests.gitrepos import worktree_paths
from tests.visibility import found


async def nothing_changed(stack: Stack, repo: Path) -> None:
    """No conversation, environment or agent run recorded, and no worktree made."""
    for table in ("conversations", "isolation_environments", "agent_runs"):
        assert await stack.db.fetchval(f"SELECT count(*) FROM {table}") == 0, f"a refused message wrote {table}"
    assert worktree_paths(repo) == []


async def recorded_as_refused(stack: Stack, platform: str, workflow_id: str) -> dict:
    """The refusal as the Temporal UI finds it, and as `GET /api/refusals` lists it."""
    query = f"IsolatorOutcome = 'refused' AND IsolatorPlatform = '{platform}'"
    assert await found(stack.temporal, query, workflow_id), query
    response = await stack.api.get("/api/refusals", params={"platform": platform})
    assert response.status_code == 200, response.text
    listed = {item["workflow_id"]: item for item in response.json()["refusals"]}
    assert workflow_id in listed, listed
    return listed[workflow_id]
