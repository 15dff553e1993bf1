"""`GET /api/environments` and `GET /api/environments/{id}`: the environments as the database knows them,
filtered by codebase, status and conversation; bad input is a 4xx with a reason."""

from __future__ import annotations

import uuid
from pathlib import Path

from tests.conftest import Stack


async def test_environments_are_listed_filtered_and_read_one_by_one(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    kept = (await stack.say("rest-kept", "work"))["result"]
    gone = (await stack.say("rest-gone", "work"))["result"]
    await stack.say("rest-gone", "/worktree remove")

    everything = (await stack.api.get("/api/environments", params={"codebase": "project"})).json()
    active = (await stack.api.get("/api/environments", params={"status": "active"})).json()
    mine = (await stack.api.get("/api/environments", params={"conversation": "test:rest-kept"})).json()
    one = await stack.api.get(f"/api/environments/{kept['environmentId']}")

    assert [item["id"] for item in everything] == [kept["environmentId"], gone["environmentId"]]
    assert [item["id"] for item in active] == [kept["environmentId"]]
    assert [item["id"] for item in mine] == [kept["environmentId"]]
    assert one.status_code == 200
    view = one.json()
    assert (view["branch"], view["working_path"], view["status"], view["codebase"]) == (
        kept["branch"], kept["workingPath"], "active", "project")
    assert view["conversations"] == ["test:rest-kept"] and view["workflow_type"] == "thread"
    destroyed = (await stack.api.get(f"/api/environments/{gone['environmentId']}")).json()
    assert destroyed["status"] == "destroyed" and destroyed["destroyed_at"] and destroyed["ports"] is None


async def test_bad_input_gets_a_reason_and_an_unknown_id_a_404(stack: Stack) -> None:
    unknown = await stack.api.get(f"/api/environments/{uuid.uuid4()}")
    malformed = await stack.api.get("/api/environments/not-a-uuid")
    bad_status = await stack.api.get("/api/environments", params={"status": "sleeping"})

    assert unknown.status_code == 404 and "no environment" in unknown.json()["detail"]
    assert malformed.status_code == 422 and bad_status.status_code == 422
    assert "status" in bad_status.text
