"""A lost disk is rebuilt, not waited on: a worker restarted on an empty disk clones its codebases again from
their URLs, puts back each worktree whose branch was pushed, and tells the conversations of the others what
was lost, once; the next message works at once."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import asyncpg

from tests.conftest import Stack
from tests.gitrepos import git
from tests.hosts.conftest import MakeCluster
from tests.hosts.relocation import bare_origin


async def test_a_worker_on_an_empty_disk_clones_again_and_puts_back_the_pushed_worktrees(
        make_cluster: MakeCluster, db: asyncpg.Pool, tmp_path: Path) -> None:
    cluster = await make_cluster(hosts=["hostA"], apis=1)
    origin = bare_origin(tmp_path / "origin")
    codebase = await cluster.register("hostA", url=f"file://{origin}", name="project")
    pushed, unpushed = "disk-pushed", "disk-unpushed"
    paths = {}
    for conversation in (pushed, unpushed):
        await cluster.say(conversation, "/clone project")
        answer = await cluster.say(conversation, "hello")
        paths[conversation] = Path(answer["result"]["workingPath"])
    (paths[pushed] / "kept.txt").write_text("committed and pushed\n")
    git("add", "kept.txt", cwd=paths[pushed])
    git("commit", "-q", "-m", "kept", cwd=paths[pushed])
    git("push", "-q", "origin", f"HEAD:refs/heads/{answer_branch(paths[pushed])}", cwd=paths[pushed])
    (paths[unpushed] / "gone.txt").write_text("never pushed\n")

    cluster.kill("hostA")
    host = cluster.host("hostA")
    for folder in (host.data_dir, host.worktree_base, host.workspace):
        shutil.rmtree(folder, ignore_errors=True)
    await cluster.restart("hostA")

    row = await db.fetchrow("SELECT checkout_state, checkout_note FROM codebases WHERE id = $1", codebase["id"])
    assert row["checkout_state"] == "rebuilt", dict(row)
    assert f"file://{origin}" in row["checkout_note"]
    view = (await cluster.api().get(f"/api/codebases/{codebase['id']}")).json()
    assert (view["checkout_state"], view["checkout_note"]) == (row["checkout_state"], row["checkout_note"])
    assert (paths[pushed] / "kept.txt").read_text() == "committed and pushed\n"
    assert not paths[unpushed].exists()
    told = await cluster.reply_containing(pushed, "was lost. It was put back")
    assert "hostA" in told
    lost = await cluster.reply_containing(unpushed, "nothing of it could be put back")
    assert "never pushed" in lost

    again = await cluster.say(unpushed, "hello again")  # answered at once, in a new worktree
    assert again["result"]["outcome"] == "created", again
    assert Path(again["result"]["workingPath"]).is_dir()
    reused = await cluster.say(pushed, "hello again")
    assert reused["result"]["outcome"] == "reused", reused
    for conversation, words in ((pushed, "put back"), (unpushed, "could be put back")):
        assert sum(words in text for text in await cluster.replies(conversation)) == 1


def answer_branch(worktree: Path) -> str:
    return git("rev-parse", "--abbrev-ref", "HEAD", cwd=worktree).strip()


async def test_a_checkout_deleted_under_a_running_worker_is_cloned_again_at_the_next_message(
        stack: Stack, tmp_path: Path) -> None:
    origin = bare_origin(tmp_path / "origin")
    response = await stack.api.post("/api/codebases", json={"url": f"file://{origin}", "name": "project"})
    assert response.status_code in (200, 201), response.text
    checkout = Path(response.json()["canonical_path"])
    await stack.say("deleted-checkout", "/clone project")
    shutil.rmtree(checkout)

    answer = await asyncio.wait_for(stack.say("deleted-checkout", "hello"), 60)
    assert answer["result"]["outcome"] == "created", answer
    assert (checkout / ".git").is_dir()
    row = await stack.db.fetchrow("SELECT checkout_state FROM codebases WHERE name = 'project'")
    assert row["checkout_state"] == "rebuilt"


async def test_a_checkout_gone_with_no_url_to_clone_from_is_said_not_retried(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    await stack.say("no-url", "/clone project")
    shutil.rmtree(repo)
    answer = await asyncio.wait_for(stack.say("no-url", "hello"), 60)
    assert answer["result"]["outcome"] == "failed", answer
    replies = await stack.replies("no-url")
    assert any("registered without a URL" in text for text in replies), replies
