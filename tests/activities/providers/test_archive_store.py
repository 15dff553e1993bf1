"""The archive store on real git: each archive's own objects are packed there, so a `git gc` of the
shared repository takes none of them away; an archive saved twice is the same archive; archives an
older version kept in the shared repository move in on the first use; a prune leaves the store one
pack of what the remaining archives hold."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from activities.environments.isolation import IsolationActivities
from activities.providers.worktree.archive import archive_ref, save_archive
from isolator.contracts.worktree import (
    ArchivedBranch,
    PruneArchivesInput,
    RemovalReport,
    RemoveWorktreeInput,
    RestoreWorktreeInput,
)
from isolator.settings import Settings, load_settings
from tests.archives import archive_refs, archive_store_of, fingerprint, make_a_mess
from tests.gitrepos import git
from tests.worktrees import add_worktree, codebase_of

ONE, TWO = "5d0c0d8e-1111-4c55-9d43-4a8f3b0c9e11", "5d0c0d8e-2222-4c55-9d43-4a8f3b0c9e22"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings(data_dir=tmp_path / "data", worktree_base_setting=tmp_path / "worktrees", host="test-host")


async def remove(settings: Settings, repo: Path, path: Path, branch: str, environment: str) -> RemovalReport:
    request = RemoveWorktreeInput(codebase_of(repo), str(path), branch, force=True, environment_id=environment)
    return await IsolationActivities(settings).remove_worktree(request)


async def restore(settings: Settings, repo: Path, path: Path, branch: str, environment: str, tip: str | None) -> str:
    request = RestoreWorktreeInput(codebase_of(repo), str(path), branch, archive_ref(environment), tip)
    restored = await IsolationActivities(settings).restore_worktree(request)
    assert restored.outcome == "restored", restored.message
    return restored.outcome


def collect_garbage(repo: Path) -> None:
    """What git's own gc may do to the shared repository at any time, at its harshest."""
    git("-c", "gc.reflogExpire=now", "-c", "gc.reflogExpireUnreachable=now", "gc", "-q", "--prune=now", cwd=repo)


def store_files(repo: Path) -> list[str]:
    objects = archive_store_of(repo) / "objects"
    return sorted(str(path.relative_to(objects)) for path in objects.rglob("*")
                  if path.is_file() and path.parent.name != "info")


async def test_an_archive_survives_a_gc_of_the_shared_repository(settings: Settings, repo: Path) -> None:
    """Its staged files were objects of the shared store that only the worktree's index reached; its
    branch, deleted by hand, held the only other way to its commit."""
    path = add_worktree(settings, repo, "kept", commits=1)
    make_a_mess(path)
    before = fingerprint(path)
    report = await remove(settings, repo, path, "kept", ONE)
    git("branch", "-D", "kept", cwd=repo)

    collect_garbage(repo)

    await restore(settings, repo, path, "kept", ONE, report.branch_tip)
    assert fingerprint(path) == before
    assert git("fsck", "--connectivity-only", "--no-dangling", cwd=repo) == "", "its index is whole in the repository"


async def test_an_archive_saved_twice_is_the_same_archive(settings: Settings, repo: Path) -> None:
    path = add_worktree(settings, repo, "twice")
    make_a_mess(path)

    first = await save_archive(path, archive_ref(ONE), "twice")
    files = store_files(repo)
    again = await save_archive(path, archive_ref(ONE), "twice")

    assert again == first and store_files(repo) == files
    assert all(name.startswith("pack/") for name in files), "no loose copies beside the pack"


async def test_archives_kept_in_the_shared_repository_move_into_the_store(settings: Settings, repo: Path) -> None:
    """As an older version saved them: a commit of the files, with the branch's commit and one of the
    index as parents, under refs/isolator/archive/<id> of the shared repository."""
    path = add_worktree(settings, repo, "older", commits=1)
    make_a_mess(path)
    before = fingerprint(path)
    tip = git("rev-parse", "HEAD", cwd=path).strip()
    scratch = {**os.environ, "GIT_INDEX_FILE": str(path.parent / "scratch-index")}
    subprocess.run(["git", "add", "--all"], cwd=path, env=scratch, check=True)
    files = subprocess.run(["git", "write-tree"], cwd=path, env=scratch, check=True, capture_output=True,
                           text=True).stdout.strip()
    index = git("commit-tree", git("write-tree", cwd=path).strip(), "-p", tip, "-m", "index", cwd=path).strip()
    archive = git("commit-tree", files, "-p", tip, "-p", index, "-m", "archive\n\nIsolator-Branch: older",
                  cwd=path).strip()
    git("update-ref", archive_ref(ONE), archive, cwd=repo)
    git("worktree", "remove", "--force", str(path), cwd=repo)
    # A store half made by a worker killed during an earlier move: made again, whole.
    git("init", "-q", "--bare", str(archive_store_of(repo).with_name("isolator-archives.new")), cwd=repo)

    await restore(settings, repo, path, "older", ONE, tip)

    assert fingerprint(path) == before
    assert git("for-each-ref", "refs/isolator/archive/", cwd=repo) == "", "gone from the shared repository"
    assert archive_refs(repo) == [archive_ref(ONE)]
    assert not archive_store_of(repo).with_name("isolator-archives.new").exists()
    git("worktree", "remove", "--force", str(path), cwd=repo)
    collect_garbage(repo)
    await restore(settings, repo, path, "older", ONE, tip)
    assert fingerprint(path) == before


async def test_a_prune_leaves_the_store_what_the_remaining_archives_hold(settings: Settings, repo: Path) -> None:
    gone, kept = add_worktree(settings, repo, "gone"), add_worktree(settings, repo, "stays")
    (gone / "gone.txt").write_text("only the pruned archive held this\n")
    (kept / "file1.txt").write_text("staged in the remaining archive\n")
    git("add", "file1.txt", cwd=kept)
    (kept / "notes.txt").write_text("untracked in the remaining archive\n")
    before = fingerprint(kept)
    await remove(settings, repo, gone, "gone", ONE)
    report = await remove(settings, repo, kept, "stays", TWO)

    pruned = await IsolationActivities(settings).prune_archives(
        PruneArchivesInput(codebase_of(repo), [ArchivedBranch(ONE, archive_ref(ONE), "gone")]))

    assert [entry.branch_outcome for entry in pruned] == ["deleted"]
    assert archive_refs(repo) == [archive_ref(TWO)]
    assert [name.rsplit(".", 1)[-1] for name in store_files(repo)] == ["idx", "pack"], "one pack, no loose object"
    everything = subprocess.run(["git", "--git-dir", str(archive_store_of(repo)), "cat-file", "--batch-all-objects",
                                 "--batch"], check=True, capture_output=True).stdout
    assert b"only the pruned archive held this" not in everything
    assert b"staged in the remaining archive" in everything and b"untracked in the remaining archive" in everything
    collect_garbage(repo)
    await restore(settings, repo, kept, "stays", TWO, report.branch_tip)
    assert fingerprint(kept) == before
