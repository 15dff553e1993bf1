"""Registering a repository that is registered already, for another host or under another name: a 409 that says
where it is and how to move it, never the other codebase answered as if it were the one asked for (a 200)."""

from __future__ import annotations

import shutil
from pathlib import Path

from isolator.settings import load_settings
from tests.conftest import Stack
from tests.gitrepos import git, make_repo
from workers.worker import host_worker


async def test_the_same_url_for_another_host_is_a_409_naming_where_it_is_and_the_move(stack: Stack,
                                                                                       tmp_path: Path) -> None:
    url = make_repo(tmp_path / "upstream" / "widget").as_uri()
    first = await stack.api.post("/api/codebases", json={"url": url})
    assert first.status_code == 201, first.text
    codebase = first.json()

    again = await stack.api.post("/api/codebases", json={"url": url, "host": "hostC"})
    assert again.status_code == 409, again.text
    assert again.json()["detail"] == (
        f"`{url}` is registered already, as `widget` on {stack.settings.host} (at `{codebase['canonical_path']}`). "
        f"To move it to hostC, with its worktrees' work: POST /api/codebases/{codebase['id']}/move "
        '{"host": "hostC"} (or the Move button on its dashboard page).')
    renamed = await stack.api.post("/api/codebases", json={"url": url, "name": "gadget"})
    assert renamed.status_code == 409 and "A codebase keeps its name" in renamed.json()["detail"], renamed.text

    same = await stack.api.post("/api/codebases", json={"url": url, "host": stack.settings.host, "name": "widget"})
    assert same.status_code == 200 and same.json()["id"] == codebase["id"], "the same registration again: its 200"
    rows = await stack.db.fetch("SELECT name, host FROM codebases")
    assert [(row["name"], row["host"]) for row in rows] == [("widget", stack.settings.host)]


async def test_a_checkout_of_it_on_another_host_is_a_409_too(stack: Stack, repo: Path, tmp_path: Path) -> None:
    """The other host's checkout has the same origin: the registration finds the first one only when recording."""
    git("remote", "add", "origin", "https://example.com/team/project.git", cwd=repo)
    assert (await stack.api.post("/api/codebases", json={"path": str(repo)})).status_code == 201
    copy = tmp_path / "host-c" / "project"
    shutil.copytree(repo, copy)
    other = load_settings(
        database_url=stack.settings.database_url, temporal_address=stack.settings.temporal_address,
        data_dir=tmp_path / "c", worktree_base_setting=tmp_path / "c-worktrees",
        workspace_path_setting=tmp_path / "c-workspace", host="hostC", task_queue=stack.settings.task_queue,
    )
    async with host_worker(stack.temporal, stack.db, other):
        again = await stack.api.post("/api/codebases", json={"path": str(copy), "host": "hostC"})
    assert again.status_code == 409, again.text
    assert f"as `project` on {stack.settings.host} (at `{repo.resolve()}`)" in again.json()["detail"]
    assert "/move" in again.json()["detail"]
    assert await stack.db.fetchval("SELECT count(*) FROM codebases") == 1
