"""Archives on real git: every removal of an environment's worktree saves it under
refs/isolator/archive/<id> in the codebase's archive store and keeps its branch; a restore brings back
every file byte for byte, with what was staged still staged; the retention prunes archives and the
branches nothing needs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from activities.environments.isolation import IsolationActivities
from activities.providers.worktree.archive import staging_path
from isolator.contracts.worktree import (
    ArchivedBranch,
    PruneArchivesInput,
    RemovalReport,
    RemoveWorktreeInput,
    RestoredWorktree,
    RestoreWorktreeInput,
)
from isolator.settings import Settings, load_settings
from tests.archives import archive_git, archive_refs, fingerprint, make_a_mess
from tests.gitrepos import branches, git, worktree_paths
from tests.worktrees import add_worktree, codebase_of, commit

ENVIRONMENT = "6f1c2a52-3f0e-4c55-9d43-4a8f3b0c9e11"
REF = f"refs/isolator/archive/{ENVIRONMENT}"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings(data_dir=tmp_path / "data", worktree_base_setting=tmp_path / "worktrees", host="test-host")


async def remove(settings: Settings, repo: Path, path: Path, branch: str, force: bool = True) -> RemovalReport:
    request = RemoveWorktreeInput(codebase_of(repo), str(path), branch, force=force, environment_id=ENVIRONMENT)
    return await IsolationActivities(settings).remove_worktree(request)


async def restore(settings: Settings, repo: Path, path: Path, branch: str, tip: str | None) -> RestoredWorktree:
    request = RestoreWorktreeInput(codebase_of(repo), str(path), branch, REF, tip)
    return await IsolationActivities(settings).restore_worktree(request)


async def test_a_removal_archives_everything_keeps_the_branch_and_a_restore_brings_it_all_back(
    settings: Settings, repo: Path
) -> None:
    path = add_worktree(settings, repo, "feature/x", commits=2)
    make_a_mess(path)
    before = fingerprint(path)
    tip = git("rev-parse", "feature/x", cwd=repo).strip()

    report = await remove(settings, repo, path, "feature/x")

    assert (report.outcome, report.branch_outcome, report.archive_refs) == ("removed", "archived", [REF])
    assert report.branch_tip == tip
    assert "/worktree restore feature/x" in report.message
    assert not path.exists() and worktree_paths(repo) == []
    assert git("rev-parse", "feature/x", cwd=repo).strip() == tip, "the branch stays while its archive does"

    restored = await restore(settings, repo, path, "feature/x", tip)

    assert restored.outcome == "restored", restored.message
    assert fingerprint(path) == before
    assert not (path / "debug.log").exists(), "ignored files are not archived"
    assert worktree_paths(repo) == [str(path)]
    assert not staging_path(settings.worktree_base, path).exists()


async def test_a_clean_worktree_is_archived_too_and_comes_back_clean(settings: Settings, repo: Path) -> None:
    path = add_worktree(settings, repo, "tidy", commits=1)
    tip = git("rev-parse", "tidy", cwd=repo).strip()

    report = await remove(settings, repo, path, "tidy", force=False)
    restored = await restore(settings, repo, path, "tidy", report.branch_tip)

    assert (report.branch_outcome, report.branch_tip) == ("archived", tip)
    assert restored.outcome == "restored"
    assert git("status", "--porcelain", cwd=path) == ""
    assert git("rev-parse", "HEAD", cwd=path).strip() == tip


async def test_without_force_a_dirty_worktree_is_refused_and_nothing_is_archived(settings: Settings, repo: Path) -> None:
    path = add_worktree(settings, repo, "busy")
    (path / "notes.txt").write_text("mine\n")

    report = await remove(settings, repo, path, "busy", force=False)

    assert (report.outcome, report.refused_because) == ("refused", "uncommitted_changes")
    assert archive_refs(repo) == []


async def test_killed_between_archive_and_removal_the_retry_keeps_the_archive(settings: Settings, repo: Path) -> None:
    """The worker died after the archive was saved and git removed the folder, before it answered."""
    path = add_worktree(settings, repo, "half")
    make_a_mess(path)
    before = fingerprint(path)
    first = await remove(settings, repo, path, "half")
    (settings.worktree_base / ".removed").exists() and shutil.rmtree(settings.worktree_base / ".removed")

    retried = await remove(settings, repo, path, "half")

    assert (retried.outcome, retried.branch_outcome, retried.archive_refs) == ("already_gone", "archived", [REF])
    assert retried.branch_tip == first.branch_tip
    assert (await restore(settings, repo, path, "half", retried.branch_tip)).outcome == "restored"
    assert fingerprint(path) == before


async def test_a_restore_killed_halfway_is_cleared_and_done_again(settings: Settings, repo: Path) -> None:
    path = add_worktree(settings, repo, "again")
    make_a_mess(path)
    before = fingerprint(path)
    report = await remove(settings, repo, path, "again")
    staging = staging_path(settings.worktree_base, path)
    staging.parent.mkdir(parents=True)
    git("worktree", "add", "-q", "--no-checkout", "--", str(staging), "again", cwd=repo)  # then the kill
    (staging / "partial").write_text("half\n")

    restored = await restore(settings, repo, path, "again", report.branch_tip)
    retried = await restore(settings, repo, path, "again", report.branch_tip)  # after the move: done already

    assert (restored.outcome, retried.outcome) == ("restored", "restored")
    assert fingerprint(path) == before
    assert worktree_paths(repo) == [str(path)]


async def test_a_branch_deleted_by_hand_is_made_again_at_its_archived_commit(settings: Settings, repo: Path) -> None:
    path = add_worktree(settings, repo, "gone", commits=1)
    (path / "notes.txt").write_text("untracked\n")
    report = await remove(settings, repo, path, "gone")
    git("branch", "-D", "gone", cwd=repo)

    restored = await restore(settings, repo, path, "gone", report.branch_tip)

    assert restored.outcome == "restored"
    assert git("rev-parse", "gone", cwd=repo).strip() == report.branch_tip
    assert (path / "notes.txt").read_text() == "untracked\n"


async def test_a_restore_is_refused_when_the_branch_moved_is_in_use_or_the_archive_is_gone(
    settings: Settings, repo: Path
) -> None:
    path = add_worktree(settings, repo, "moving")
    report = await remove(settings, repo, path, "moving", force=False)
    git("branch", "-f", "moving", commit(repo, "later.txt", "main moved\n"), cwd=repo)

    moved = await restore(settings, repo, path, "moving", report.branch_tip)
    git("branch", "-f", "moving", report.branch_tip, cwd=repo)
    holder = add_worktree(settings, repo, "holder")
    git("switch", "-q", "moving", cwd=holder)
    in_use = await restore(settings, repo, path, "moving", report.branch_tip)
    archive_git(repo, "update-ref", "-d", REF)
    gone = await restore(settings, repo, path, "moving", report.branch_tip)

    assert moved.outcome == in_use.outcome == gone.outcome == "refused"
    assert "has moved since it was archived" in moved.message
    assert f"checked out at `{holder}`" in in_use.message
    assert "is gone" in gone.message
    assert not path.exists()


async def test_pruning_deletes_the_archive_and_only_the_branches_nothing_else_needs(
    settings: Settings, repo: Path
) -> None:
    merged = add_worktree(settings, repo, "merged", commits=1)
    solo = add_worktree(settings, repo, "solo", commits=1)
    git("merge", "-q", "--no-ff", "-m", "merge", "merged", cwd=repo)
    archives = []
    for environment, path, branch in (("a", merged, "merged"), ("b", solo, "solo")):
        request = RemoveWorktreeInput(codebase_of(repo), str(path), branch, force=True, environment_id=environment)
        report = await IsolationActivities(settings).remove_worktree(request)
        archives.append(ArchivedBranch(environment, report.archive_refs[0], branch))

    pruned = await IsolationActivities(settings).prune_archives(PruneArchivesInput(codebase_of(repo), archives))

    assert [(entry.branch, entry.branch_outcome) for entry in pruned] == [("merged", "deleted"), ("solo", "kept")]
    assert archive_refs(repo) == []
    assert branches(repo) == ["main", "solo"]
