"""A hostile layout under WORKTREE_BASE: symlinks that lead outside it. Removal, cleanup and creation
prove every path lies inside the base with symlinks resolved, so they never follow one out."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import Stack
from tests.gitrepos import branches, git
from tests.security.fuzzing import disk

PRECIOUS = "precious.txt"


@pytest.fixture
def elsewhere(tmp_path: Path) -> Path:
    """A folder outside WORKTREE_BASE holding something that must survive."""
    folder = tmp_path / "elsewhere" / "important"
    folder.mkdir(parents=True)
    (folder / PRECIOUS).write_text("keep me\n")
    (folder / "nested").mkdir()
    (folder / "nested" / "more.txt").write_text("and me\n")
    return folder


def intact(folder: Path) -> bool:
    return (folder / PRECIOUS).read_text() == "keep me\n" and (folder / "nested" / "more.txt").is_file()


async def say(stack: Stack, conversation: str, text: str) -> list[str]:
    return (await stack.say(conversation, text))["result"]["replies"]


async def row_status(stack: Stack, branch: str) -> str:
    return await stack.db.fetchval("SELECT status FROM isolation_environments WHERE branch_name = $1", branch)


async def swap_for_symlink(stack: Stack, repo: Path, conversation: str, name: str, target: Path) -> Path:
    """A task worktree made by the service, whose folder is then replaced by a symlink to `target`."""
    await say(stack, conversation, f"/worktree create {name}")
    path = stack.settings.worktree_base.resolve() / "project" / f"task-{name}"
    assert (path / "file0.txt").is_file()
    shutil.rmtree(path)
    os.symlink(target, path)
    return path


async def test_removing_a_worktree_swapped_for_a_symlink_leaves_its_target_alone(
    stack: Stack, repo: Path, elsewhere: Path
) -> None:
    await stack.register(repo)
    link = await swap_for_symlink(stack, repo, "hostile-1", "victim", elsewhere)
    outside_before = disk(elsewhere)

    for command in ("/worktree remove", "/worktree remove --force", "/worktree remove --force task-victim"):
        replies = await say(stack, "hostile-1", command)
        assert replies == [f"`{link}` is outside the worktree folder, so it was not removed."], (command, replies)
        assert intact(elsewhere) and disk(elsewhere) == outside_before, command
        assert link.is_symlink(), "the symlink is neither followed nor replaced"
    assert await row_status(stack, "task-victim") == "active", "a refused removal does not mark it destroyed"


async def test_cleanup_does_not_follow_a_symlink_out_of_the_base(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    await say(stack, "hostile-2", "/worktree create merged")
    path = stack.settings.worktree_base.resolve() / "project" / "task-merged"
    (path / "feature.txt").write_text("done\n")
    git("add", "feature.txt", cwd=path)
    git("commit", "-q", "-m", "feature", cwd=path)
    git("merge", "-q", "--ff-only", "task-merged", cwd=repo)  # merged, with work: what cleanup removes
    await say(stack, "hostile-2", "/worktree create next")  # and no conversation works in it any more
    # The worktree moves out of the base (still clean, still git's), and a symlink takes its place.
    moved = stack.tmp_path / "elsewhere" / "task-merged"
    moved.parent.mkdir()
    git("worktree", "move", str(path), str(moved), cwd=repo)
    os.symlink(moved, path)
    outside_before = disk(moved)

    replies = await say(stack, "bystander", "/worktree cleanup merged")
    assert "task-merged" in replies[0] and "is outside the worktree folder, so it was not removed" in replies[0]
    assert await row_status(stack, "task-merged") == "active"
    assert disk(moved) == outside_before and (moved / "feature.txt").read_text() == "done\n", replies
    assert str(moved) in git("worktree", "list", cwd=repo) and "task-merged" in branches(repo)
    assert path.is_symlink()


async def test_a_row_pointing_outside_the_base_is_never_removed(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    await say(stack, "hostile-3", "/worktree create moved")
    # The row now names a real worktree of the repository, but one outside the base.
    real = stack.tmp_path / "elsewhere" / "task-moved"
    real.parent.mkdir()
    git("worktree", "move", str(stack.settings.worktree_base / "project" / "task-moved"), str(real), cwd=repo)
    environment_id = await stack.db.fetchval(
        "UPDATE isolation_environments SET working_path = $1 WHERE branch_name = 'task-moved' RETURNING id", str(real)
    )
    # Its workflow is gone too, so the removal starts a new one from the row, outside path and all.
    await stack.temporal.get_workflow_handle(f"environment:{environment_id}").terminate("test: a lost workflow")
    (real / "work.txt").write_text("uncommitted\n")

    replies = await say(stack, "hostile-3", "/worktree remove --force task-moved")
    assert any("outside the worktree folder" in reply for reply in replies), replies
    assert (real / "work.txt").read_text() == "uncommitted\n" and (real / "file0.txt").is_file()
    assert str(real) in git("worktree", "list", cwd=repo)
    assert await row_status(stack, "task-moved") == "active"


async def test_a_codebase_folder_that_is_a_symlink_gets_nothing_created_through_it(
    stack: Stack, repo: Path, elsewhere: Path
) -> None:
    await stack.register(repo)
    base = stack.settings.worktree_base
    base.mkdir(parents=True, exist_ok=True)
    os.symlink(elsewhere, base / "project")
    outside_before = disk(elsewhere)

    for conversation, text in (("hostile-4", "/worktree create sneaky"), ("hostile-5", "hello")):
        answer = await stack.say(conversation, text)
        assert answer["result"]["workingPath"] is None, answer
        (reply,) = answer["result"]["replies"]
        assert "is outside the worktree base" in reply, reply
        assert intact(elsewhere) and disk(elsewhere) == outside_before, answer
    assert await stack.db.fetchval("SELECT count(*) FROM isolation_environments") == 0
    assert git("worktree", "list", "--porcelain", cwd=repo).count("worktree ") == 1
