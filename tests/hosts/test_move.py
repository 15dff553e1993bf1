"""Moving a codebase to another host (POST /api/codebases/{id}/move): its active worktree's uncommitted work is
on the new host afterwards, whether the old host answers (its work pushed from it through origin) or was
killed (the archive ARCHIVE_PUSH left at origin after the last run); the records moved, the conversation told
once, and its next message works there."""

from __future__ import annotations

import asyncio
from pathlib import Path

import asyncpg

from tests.agents import command
from tests.gitrepos import git
from tests.hosts.cluster import Cluster
from tests.hosts.conftest import MakeCluster
from tests.hosts.relocation import bare_origin


async def move(cluster: Cluster, codebase_id: str, host: str) -> dict:
    response = await cluster.api().post(f"/api/codebases/{codebase_id}/move", params={"wait": "true"},
                                        json={"host": host})
    assert response.status_code == 200, response.text
    return response.json()


async def assert_moved(cluster: Cluster, db: asyncpg.Pool, codebase_id: str, conversation: str, old: Path,
                       files: dict[str, str]) -> None:
    row = await db.fetchrow("SELECT host, canonical_path, checkout_state FROM codebases WHERE id = $1", codebase_id)
    assert (row["host"], row["checkout_state"]) == ("hostC", "moved")
    assert Path(row["canonical_path"]).is_relative_to(cluster.host("hostC").workspace)
    path = Path(await db.fetchval("SELECT working_path FROM isolation_environments WHERE codebase_id = $1 "
                                  "AND status = 'active'", codebase_id))
    assert path.is_relative_to(cluster.host("hostC").worktree_base), path
    assert path.name == old.name
    for name, text in files.items():
        assert (path / name).read_text() == text, name
    told = await cluster.reply_containing(conversation, "moved from hostA to hostC")
    assert "uncommitted and untracked files" in told, told
    again = await cluster.say(conversation, "nothing again")
    assert (again["result"]["outcome"], again["result"]["workingPath"]) == ("reused", str(path)), again
    assert sum("moved from hostA" in text for text in await cluster.replies(conversation)) == 1


async def test_a_move_with_the_old_host_alive_takes_the_uncommitted_work_along(
        make_cluster: MakeCluster, db: asyncpg.Pool, tmp_path: Path) -> None:
    cluster = await make_cluster(hosts=["hostA", "hostC"], apis=1)
    origin = bare_origin(tmp_path / "origin")
    codebase = await cluster.register("hostA", url=f"file://{origin}", name="project")
    await cluster.say("moving", "/clone project")
    old = Path((await cluster.say("moving", "hello"))["result"]["workingPath"])
    assert old.is_relative_to(cluster.host("hostA").worktree_base)
    (old / "file0.txt").write_text("changed, not committed\n")
    (old / "draft.txt").write_text("untracked\n")

    report = await move(cluster, codebase["id"], "hostC")

    assert report["old_host_answered"] is True, report
    assert [item["outcome"] for item in report["worktrees"]] == ["archive"], report
    await assert_moved(cluster, db, codebase["id"], "moving", old,
                       {"file0.txt": "changed, not committed\n", "draft.txt": "untracked\n"})
    assert not old.exists(), "the old host's copy goes: a move back finds no stale worktree"


async def test_a_move_from_a_killed_host_takes_the_archive_pushed_after_the_last_run(
        make_cluster: MakeCluster, db: asyncpg.Pool, tmp_path: Path) -> None:
    cluster = await make_cluster(hosts=["hostA", "hostC"], apis=1, env={
        "ARCHIVE_PUSH": "true", "RESULTS": "off", "AGENT_COMMAND": command("changer")})
    origin = bare_origin(tmp_path / "origin")
    codebase = await cluster.register("hostA", url=f"file://{origin}", name="project")
    await cluster.say("moving", "/clone project")
    old = Path((await cluster.say("moving", "leave this"))["result"]["workingPath"])
    environment_id = await db.fetchval("SELECT id::text FROM isolation_environments WHERE codebase_id = $1",
                                       codebase["id"])
    pushed = f"refs/isolator/archive/{environment_id}"
    for _ in range(600):  # the run's checkpoint reaches origin as the run ends
        if pushed in git("for-each-ref", "--format=%(refname)", cwd=origin):
            break
        await asyncio.sleep(0.1)
    assert (old / "notes.txt").read_text() == "leave this\n"
    assert pushed in git("for-each-ref", "--format=%(refname)", cwd=origin)

    cluster.kill("hostA")
    report = await move(cluster, codebase["id"], "hostC")

    assert report["old_host_answered"] is False, report
    assert [item["outcome"] for item in report["worktrees"]] == ["archive"], report
    await assert_moved(cluster, db, codebase["id"], "moving", old, {"notes.txt": "leave this\n"})
    moved_to = Path(await db.fetchval("SELECT working_path FROM codebases c JOIN isolation_environments e "
                                      "ON e.codebase_id = c.id WHERE c.id = $1", codebase["id"]))
    await cluster.say("moving", "more work")
    for _ in range(600):  # run on hostC: the environment's workflow was told its new place
        if (moved_to / "work-1.txt").exists():
            break
        await asyncio.sleep(0.1)
    assert (moved_to / "work-1.txt").read_text() == "more work\n"
