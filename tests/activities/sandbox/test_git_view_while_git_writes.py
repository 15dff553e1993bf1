"""A run's git view is made while other conversations' git writes the same repository: a branch made,
moved or deleted meanwhile (git's `.lock` files come and go) never refuses the run."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from activities.sandbox import git_view
from tests.gitrepos import git, make_repo


def test_a_ref_being_written_is_read_as_it_was_and_its_lock_is_not_copied(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project")
    worktree = tmp_path / "worktrees" / "one"
    git("worktree", "add", "-q", "-b", "one", str(worktree), cwd=repo)
    heads = repo / ".git" / "refs" / "heads"
    (heads / "other.lock").write_text("0" * 40 + "\n")  # another git's `git branch other` under way
    (repo / ".git" / "worktrees" / "one" / "index.lock").write_text("")
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    view = git_view.prepare(worktree, scratch, [])
    assert view is not None and view.branch == "refs/heads/one"
    assert (view.view / "refs" / "heads" / "one").is_file()
    assert not list(view.view.rglob("*.lock")), "a copied lock would stop the program's own git"


def test_branches_made_and_deleted_meanwhile_never_refuse_the_view(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project")
    worktree = tmp_path / "worktrees" / "one"
    git("worktree", "add", "-q", "-b", "one", str(worktree), cwd=repo)
    head = git("rev-parse", "HEAD", cwd=repo).strip()
    # Real git, in a loop of its own: branches in folders of their own (the folders come and go too).
    churn = subprocess.Popen(
        ["sh", "-c", 'i=0; while :; do i=$((i+1)); git update-ref "refs/heads/t$i/x" "$1" && '
                     'git update-ref -d "refs/heads/t$i/x"; done', "churn", head],
        cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for attempt in range(300):
            scratch = tmp_path / f"scratch{attempt}"
            scratch.mkdir()
            view = git_view.prepare(worktree, scratch, [])
            assert view is not None and (view.view / "refs" / "heads" / "one").is_file()
            shutil.rmtree(scratch)
    finally:
        churn.kill()
        churn.wait()
