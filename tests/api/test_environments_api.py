"""`GET /api/environments` and `GET /api/environments/{id}`: the environments as the database knows them,
filtered by codebase, status and conversation; bad input is a 4xx with a reason."""

from __future__ import annotations

import uuid
from pathlib import Path

from tests.archives import archive_git
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


async def test_a_codebase_is_read_and_forgotten_only_once_it_has_no_active_environment(stack: Stack, repo: Path) -> None:
    codebase = await stack.register(repo)
    created = (await stack.say("rest-codebase", "work"))["result"]

    read = await stack.api.get(f"/api/codebases/{codebase['id']}")
    refused = await stack.api.delete(f"/api/codebases/{codebase['id']}")
    assert read.status_code == 200 and read.json()["name"] == "project"
    assert refused.status_code == 409 and "1 active or hibernated environment" in refused.json()["detail"]
    assert (await stack.api.get(f"/api/codebases/{codebase['id']}")).status_code == 200, "nothing changed"

    await stack.say("rest-codebase", "/worktree remove")
    await stack.db.execute("UPDATE isolation_environments SET status = 'hibernated'")  # as the disk budget leaves it
    hibernated = await stack.api.delete(f"/api/codebases/{codebase['id']}")
    assert hibernated.status_code == 409 and "1 active or hibernated environment" in hibernated.json()["detail"]
    await stack.db.execute("UPDATE isolation_environments SET status = 'destroyed'")
    forgotten = await stack.api.delete(f"/api/codebases/{codebase['id']}")

    assert forgotten.status_code == 204
    assert (await stack.api.get(f"/api/codebases/{codebase['id']}")).status_code == 404
    assert (await stack.api.get(f"/api/environments/{created['environmentId']}")).status_code == 404
    assert repo.is_dir(), "the checkout itself is left as it is"
    assert (await stack.api.delete(f"/api/codebases/{uuid.uuid4()}")).status_code == 404
    assert (await stack.api.get("/api/codebases/no-such-name")).status_code == 404, "a name is looked up too"
    assert (await stack.api.get("/api/codebases/-not a name")).status_code == 422


async def test_an_environment_is_removed_through_the_api_as_by_worktree_remove(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    created = (await stack.say("rest-remove", "work"))["result"]
    worktree = Path(created["workingPath"])
    (worktree / "draft.txt").write_text("unsaved work\n")

    refused = await stack.api.delete(f"/api/environments/{created['environmentId']}")
    assert refused.status_code == 409 and "uncommitted" in refused.json()["detail"]
    assert worktree.is_dir(), "nothing changed"

    forced = await stack.api.delete(f"/api/environments/{created['environmentId']}", params={"force": "true"})
    assert forced.status_code == 200, forced.text
    removed = forced.json()
    assert removed["outcome"] == "removed" and removed["archive_refs"], "the uncommitted work was saved first"
    assert not worktree.exists()
    read = (await stack.api.get(f"/api/environments/{created['environmentId']}")).json()
    assert read["status"] == "destroyed"
    snapshot = removed["archive_refs"][0]
    assert "unsaved work" in archive_git(repo, "show", f"{snapshot}:draft.txt")

    assert (await stack.api.delete(f"/api/environments/{uuid.uuid4()}")).status_code == 404
    assert (await stack.api.delete("/api/environments/not-a-uuid")).status_code == 422
    again = await stack.api.delete(f"/api/environments/{created['environmentId']}")
    assert again.status_code == 200 and again.json()["outcome"] == "already_gone"
