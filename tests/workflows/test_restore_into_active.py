"""Uncommitted work is not stuck after `/worktree remove --force` (issue 31): the next message makes a new
worktree on the same branch, and `/worktree restore` then brings the archived files into it when it has
no changes of its own; when it has, they stay in the archive, a commit `git stash apply` takes once
fetched from the archive store, and the reply says so. Real git, PostgreSQL and Temporal."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.archives import fingerprint, make_a_mess
from tests.chat_commands import say_one
from tests.conftest import Stack


async def removed_then_made_again(stack: Stack, repo: Path, conversation: str) -> tuple[dict, dict, dict]:
    """A worktree with a mess, removed by force; the next message makes its branch's worktree again.
    (the first environment, the fingerprint of the mess, the new environment)"""
    await stack.register(repo)
    first = (await stack.say(conversation, "hello"))["result"]
    path = Path(first["workingPath"])
    make_a_mess(path)
    before = fingerprint(path)
    assert (await say_one(stack, conversation, "/worktree remove --force")).startswith("Removed worktree")
    again = (await stack.say(conversation, "where were we?"))["result"]
    assert (again["outcome"], again["branch"], again["workingPath"]) == ("created", first["branch"], str(path))
    assert not (path / "new-staged.txt").exists(), "made again without the uncommitted files"
    return first, before, again


async def test_restore_brings_the_files_into_the_clean_worktree_of_the_same_branch(stack: Stack, repo: Path) -> None:
    first, before, again = await removed_then_made_again(stack, repo, "demo-1")
    path, branch = Path(again["workingPath"]), again["branch"]

    listing = await say_one(stack, "demo-1", "/worktree removed")
    assert f"its branch works at `{path}` again, and `/worktree restore {branch}` brings the removed files" in listing

    reply = await say_one(stack, "demo-1", f"/worktree restore {branch}")
    assert reply.startswith(f"Brought back the files of `{branch}`"), reply
    assert "holds its folder" not in reply and "test:demo-1" not in reply
    assert fingerprint(path) == before, "staged, unstaged and untracked, as they were"
    old = await stack.db.fetchrow("SELECT restored_as FROM isolation_environments WHERE id = $1::uuid",
                                  first["environmentId"])
    assert str(old["restored_as"]) == again["environmentId"]
    assert "waits to be restored" in await say_one(stack, "demo-1", "/worktree removed")


async def test_a_worktree_with_changes_of_its_own_is_left_alone_and_told_how_to_apply(
        stack: Stack, repo: Path) -> None:
    first, before, again = await removed_then_made_again(stack, repo, "demo-2")
    path, branch = Path(again["workingPath"]), again["branch"]
    (path / "mine.txt").write_text("new work of the new worktree\n")
    archive = f"refs/isolator/archive/{first['environmentId']}"
    apply = (f'git fetch -q "$(git rev-parse --git-common-dir)/isolator-archives" {archive} '
             "&& git stash apply FETCH_HEAD")

    reply = await say_one(stack, "demo-2", f"/worktree restore {branch}")
    assert "has uncommitted changes of its own" in reply and f"`{apply}`" in reply, reply
    assert sorted(p.name for p in path.iterdir() if p.name != ".git") == ["file0.txt", "file1.txt", "file2.txt",
                                                                          "mine.txt"], "nothing put over it"
    assert branch in await say_one(stack, "demo-2", "/worktree removed"), "still restorable"

    subprocess.run(["sh", "-c", apply], cwd=path, check=True)  # what the reply says to do
    assert (path / "new-staged.txt").read_text() == "a new file, staged\n"
    assert (path / "deep" / "er" / "untracked.bin").read_bytes() == bytes(range(256)) * 3
    assert (path / "file0.txt").read_text() == "unstaged edit\n" and (path / "mine.txt").exists()
