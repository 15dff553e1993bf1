"""The service's commit of what the agent left, on real git, when a nested repository with no commit is
among it: the rest is committed without it, and nothing else left is no commit at all (not a failure)."""

from __future__ import annotations

from pathlib import Path

from activities.results.commit_and_push import commit_everything
from tests.gitrepos import git, make_repo

AGENT, SERVICE = ("agent", "agent@example.invalid"), ("isolator", "isolator@example.invalid")


async def test_an_empty_nested_repository_is_left_out_of_the_commit(tmp_path: Path) -> None:
    worktree = make_repo(tmp_path / "worktree")
    before = git("rev-parse", "HEAD", cwd=worktree).strip()
    git("init", "-q", "x", cwd=worktree)

    assert await commit_everything(worktree, "nothing but x\n", AGENT, SERVICE, []) is None
    assert git("rev-parse", "HEAD", cwd=worktree).strip() == before

    (worktree / "work.txt").write_text("the agent's work\n")
    commit = await commit_everything(worktree, "work\n", AGENT, SERVICE, [])

    assert commit is not None and commit != before
    assert git("show", "--name-only", "--format=", commit, cwd=worktree).split() == ["work.txt"]
