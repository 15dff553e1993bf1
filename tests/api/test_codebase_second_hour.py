"""`/api/codebases` as a user's second hour meets it (issue 47): a `file://` URL of a checkout registered by
its path is that codebase, a URL given as `path` is told to go in `url`, and a codebase is named in the
address by its name as well as its id."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Stack
from tests.gitrepos import make_repo


async def test_a_file_url_of_a_checkout_registered_by_its_path_is_that_codebase(stack: Stack, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repos" / "project")
    first = await stack.api.post("/api/codebases", json={"path": str(repo)})
    assert first.status_code == 201, first.text

    again = await stack.api.post("/api/codebases", json={"url": f"file://{repo}"})
    assert again.status_code == 200, again.text
    assert again.json()["id"] == first.json()["id"] and again.json()["created"] is False
    assert await stack.db.fetchval("SELECT count(*) FROM codebases") == 1
    workspace = stack.settings.workspace_path
    assert not workspace.exists() or list(workspace.iterdir()) == [], "nothing was cloned"


async def test_a_url_given_as_path_is_told_to_go_in_url(stack: Stack) -> None:
    for given in ("https://github.com/team/project", "git@github.com:team/project.git"):
        response = await stack.api.post("/api/codebases", json={"path": given})
        assert response.status_code == 422, response.text
        said = "; ".join(item["msg"] for item in response.json()["detail"])
        assert "pass it as `url`" in said and given in said, said


async def test_a_codebase_is_read_changed_and_forgotten_by_its_name(stack: Stack, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repos" / "project")
    registered = (await stack.api.post("/api/codebases", json={"path": str(repo)})).json()

    read = await stack.api.get("/api/codebases/project")
    assert read.status_code == 200 and read.json()["id"] == registered["id"], read.text
    changed = await stack.api.patch("/api/codebases/project", json={"warm_worktrees": 0})
    assert changed.status_code == 200 and changed.json()["warm_pool"]["size"] == 0, changed.text
    assert (await stack.api.get(f"/api/codebases/{registered['id']}")).status_code == 200, "its id still works"

    unknown = await stack.api.delete("/api/codebases/nothing-here")
    assert unknown.status_code == 404 and "id or name" in unknown.json()["detail"], unknown.text
    forgotten = await stack.api.delete("/api/codebases/project")
    assert forgotten.status_code == 204, forgotten.text
    assert await stack.db.fetchval("SELECT count(*) FROM codebases") == 0
