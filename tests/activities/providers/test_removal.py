"""The removal activity against real git repositories, for a worktree of no environment (nothing to
archive it under): what is removed and which branches are kept. Archives: test_archive_restore.py."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from temporalio.testing import ActivityEnvironment

from activities.environments.isolation import IsolationActivities
from isolator.contracts.worktree import RemovalReport, RemoveWorktreeInput
from isolator.settings import Settings, load_settings
from tests.archives import archive_refs
from tests.gitrepos import branches, git, make_repo, worktree_paths
from tests.worktrees import add_worktree, codebase_of, commit


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Only folders: the removal needs no database and no Temporal server."""
    return load_settings(data_dir=tmp_path / "data", worktree_base_setting=tmp_path / "worktrees", host="test-host")


async def remove(settings: Settings, repository: Path, path: Path, branch: str, force: bool = False) -> RemovalReport:
    request = RemoveWorktreeInput(codebase=codebase_of(repository), working_path=str(path), branch=branch, force=force)
    return await IsolationActivities(settings).remove_worktree(request)


def ref_exists(repository: Path, ref: str) -> bool:
    return bool(git("for-each-ref", "--format=%(refname)", ref, cwd=repository).strip())


async def test_a_clean_merged_worktree_is_removed_with_its_branch(settings: Settings, repo: Path) -> None:
    path = add_worktree(settings, repo, "feature", commits=2)
    git("merge", "-q", "--no-ff", "-m", "merge feature", "feature", cwd=repo)

    report = await remove(settings, repo, path, "feature")

    assert (report.outcome, report.branch_outcome, report.refused_because) == ("removed", "deleted", None)
    assert not path.exists()
    assert worktree_paths(repo) == []
    assert "feature" not in branches(repo)
    assert "already in `main`" in report.message


async def test_runs_inside_a_temporal_activity_context(settings: Settings, repo: Path) -> None:
    path = add_worktree(settings, repo, "fresh")  # no commits of its own: merged by ancestry
    request = RemoveWorktreeInput(codebase=codebase_of(repo), working_path=str(path), branch="fresh")

    report = await ActivityEnvironment().run(IsolationActivities(settings).remove_worktree, request)

    assert (report.outcome, report.branch_outcome) == ("removed", "deleted")


async def test_unique_commits_keep_the_branch_but_the_clean_worktree_goes(settings: Settings, repo: Path) -> None:
    path = add_worktree(settings, repo, "solo", commits=1)
    tip = git("rev-parse", "solo", cwd=repo).strip()

    report = await remove(settings, repo, path, "solo")

    assert (report.outcome, report.branch_outcome) == ("removed", "kept")
    assert not path.exists()
    assert git("rev-parse", "solo", cwd=repo).strip() == tip
    assert "found on no other branch or remote" in report.message
    assert report.archive_refs == []


async def test_a_dirty_worktree_is_refused_without_force_and_nothing_changes(settings: Settings, repo: Path) -> None:
    path = add_worktree(settings, repo, "busy", commits=1)
    (path / "file0.txt").write_text("edited\n")
    (path / "notes.txt").write_text("untracked\n")

    report = await remove(settings, repo, path, "busy")

    assert (report.outcome, report.refused_because) == ("refused", "uncommitted_changes")
    assert "/worktree remove --force" in report.message
    assert (path / "file0.txt").read_text() == "edited\n"
    assert (path / "notes.txt").read_text() == "untracked\n"
    assert worktree_paths(repo) == [str(path)]
    assert "busy" in branches(repo)


async def test_without_an_environment_to_archive_under_force_still_keeps_a_dirty_worktree(
    settings: Settings, repo: Path
) -> None:
    path = add_worktree(settings, repo, "undone")
    (path / "notes.txt").write_text("untracked\n")

    report = await remove(settings, repo, path, "undone", force=True)

    assert (report.outcome, report.refused_because) == ("refused", "uncommitted_changes")
    assert (path / "notes.txt").read_text() == "untracked\n"


async def test_a_path_outside_the_base_is_refused_and_untouched(settings: Settings, repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "feature"
    git("worktree", "add", "-q", "-b", "feature", "--", str(outside), "main", cwd=repo)
    link = settings.worktree_base / "project" / "link"
    link.parent.mkdir(parents=True)
    link.symlink_to(outside)

    for path in (outside, link, settings.worktree_base):
        report = await remove(settings, repo, path, "feature")
        assert (report.outcome, report.refused_because) == ("refused", "outside_base"), path

    assert worktree_paths(repo) == [str(outside.resolve())]
    assert "feature" in branches(repo)


async def test_a_path_that_is_not_a_worktree_of_the_codebase_is_refused(
    settings: Settings, repo: Path, tmp_path: Path
) -> None:
    plain = settings.worktree_base / "project" / "plain"
    plain.mkdir(parents=True)
    (plain / "keep.txt").write_text("mine\n")
    other = make_repo(tmp_path / "repos" / "other")
    foreign = settings.worktree_base / "other" / "feature"
    git("worktree", "add", "-q", "-b", "feature", "--", str(foreign), "main", cwd=other)
    git("branch", "feature", cwd=repo)

    for path in (plain, foreign):
        report = await remove(settings, repo, path, "feature", force=True)
        assert (report.outcome, report.refused_because) == ("refused", "not_a_worktree"), path

    assert (plain / "keep.txt").read_text() == "mine\n"
    assert worktree_paths(other) == [str(foreign.resolve())]
    assert "feature" in branches(repo)


async def test_the_main_checkout_is_never_removed(settings: Settings) -> None:
    main = make_repo(settings.worktree_base / "project")

    report = await remove(settings, main, main, "main", force=True)

    assert (report.outcome, report.refused_because) == ("refused", "not_a_worktree")
    assert (main / ".git").is_dir()


async def test_a_worktree_deleted_behind_our_back_is_pruned(settings: Settings, repo: Path) -> None:
    merged = add_worktree(settings, repo, "merged")
    solo = add_worktree(settings, repo, "solo", commits=1)
    shutil.rmtree(merged)
    shutil.rmtree(solo)

    first = await remove(settings, repo, merged, "merged")
    second = await remove(settings, repo, solo, "solo")

    assert (first.outcome, first.branch_outcome) == ("already_gone", "deleted")
    assert (second.outcome, second.branch_outcome) == ("already_gone", "kept")
    assert worktree_paths(repo) == []
    assert branches(repo) == ["main", "solo"]


async def test_a_squash_merged_branch_counts_as_merged(settings: Settings, repo: Path) -> None:
    path = add_worktree(settings, repo, "squashed", commits=3)
    git("merge", "-q", "--squash", "squashed", cwd=repo)
    git("commit", "-q", "-m", "squash", cwd=repo)
    commit(repo, "later.txt", "main moved on\n")

    report = await remove(settings, repo, path, "squashed")

    assert (report.outcome, report.branch_outcome) == ("removed", "deleted")
    assert "squashed" not in branches(repo)


async def test_a_rebase_merged_branch_counts_as_merged_even_after_later_edits(settings: Settings, repo: Path) -> None:
    path = add_worktree(settings, repo, "rebased", commits=1)
    git("cherry-pick", "rebased", cwd=repo)
    commit(repo, "rebased-0.txt", "edited again on main\n")  # merging the branch again would conflict

    report = await remove(settings, repo, path, "rebased")

    assert report.branch_outcome == "deleted"


async def test_a_branch_pushed_to_origin_but_not_merged_is_deleted(settings: Settings, tmp_path: Path) -> None:
    seed = make_repo(tmp_path / "seed")
    origin = tmp_path / "origin.git"
    git("clone", "-q", "--bare", str(seed), str(origin), cwd=tmp_path)
    git("clone", "-q", str(origin), "project", cwd=tmp_path)
    repository = tmp_path / "project"
    path = add_worktree(settings, repository, "pushed", commits=2)
    tip = git("rev-parse", "pushed", cwd=repository).strip()
    git("push", "-q", "origin", "pushed", cwd=path)

    report = await remove(settings, repository, path, "pushed")

    assert (report.outcome, report.branch_outcome) == ("removed", "deleted")
    assert "still on `origin/pushed`" in report.message
    assert git("rev-parse", "origin/pushed", cwd=repository).strip() == tip
    assert git("rev-parse", "refs/heads/pushed", cwd=origin).strip() == tip


async def test_a_retry_after_the_worktree_was_removed_finishes_the_branch(settings: Settings, repo: Path) -> None:
    path = add_worktree(settings, repo, "half")
    git("worktree", "remove", "--", str(path), cwd=repo)  # the first attempt got this far

    retried = await remove(settings, repo, path, "half")
    again = await remove(settings, repo, path, "half")

    assert (retried.outcome, retried.branch_outcome) == ("already_gone", "deleted")
    assert (again.outcome, again.branch_outcome) == ("already_gone", "absent")
    assert branches(repo) == ["main"]


async def test_an_invalid_branch_name_is_left_alone(settings: Settings, repo: Path) -> None:
    path = add_worktree(settings, repo, "odd")

    report = await remove(settings, repo, path, "--all")

    assert (report.outcome, report.branch_outcome) == ("removed", "absent")
    assert branches(repo) == ["main", "odd"]
    assert archive_refs(repo) == []


async def test_a_branch_checked_out_elsewhere_or_the_default_branch_is_kept(settings: Settings, repo: Path) -> None:
    first = add_worktree(settings, repo, "shared")
    git("switch", "-q", "-c", "moved-on", cwd=first)  # the user switched the worktree away...
    git("switch", "-q", "shared", cwd=repo)  # ...and checked its branch out in the main checkout
    second = add_worktree(settings, repo, "other")

    report = await remove(settings, repo, first, "shared")
    default = await remove(settings, repo, second, "main")

    assert (report.outcome, report.branch_outcome) == ("removed", "kept")
    assert f"checked out at `{repo.resolve()}`" in report.message
    assert (default.outcome, default.branch_outcome) == ("removed", "kept")
    assert "shared" in branches(repo) and "main" in branches(repo)
