"""create_worktree and find_adoptable_worktree on real repositories, without Temporal: the git work
of the create path, what it costs in git processes, and which worktrees count as the service's own."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Callable

import pytest
from temporalio.testing import ActivityEnvironment

from activities.environments.isolation import IsolationActivities
from isolator.contracts.codebase import Codebase
from isolator.contracts.worktree import (
    AdoptionSearch,
    AdoptQuery,
    RemoveWorktreeInput,
    WorktreeReady,
    WorktreeRequest,
)
from isolator.settings import Settings, load_settings
from tests.archives import archive_git
from tests.gitrepos import branches, git, make_repo, worktree_paths

HOST = "test-host"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings(data_dir=tmp_path / "data", worktree_base_setting=tmp_path / "worktrees", host=HOST)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "project")


def codebase_of(repository: Path, host: str = HOST) -> Codebase:
    return Codebase(id="1", name="project", canonical_path=str(repository), default_branch="main", host=host)


async def create(settings: Settings, repository: Path, branch: str) -> WorktreeReady:
    request = WorktreeRequest(codebase_of(repository), branch)
    return await ActivityEnvironment().run(IsolationActivities(settings).create_worktree, request)


async def adopt(settings: Settings, repository: Path, branch: str, host: str = HOST) -> AdoptionSearch:
    query = AdoptQuery(codebase_of(repository, host), branch)
    return await ActivityEnvironment().run(IsolationActivities(settings).find_adoptable_worktree, query)


@pytest.fixture
def git_processes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[], list[str]]:
    """The git commands run from now on, as their subcommands: a `git` first on PATH that notes
    each call and runs the real git."""
    real = shutil.which("git")
    assert real is not None
    shim = tmp_path / "counting-bin"
    shim.mkdir()
    log = tmp_path / "git-calls"
    log.touch()
    (shim / "git").write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{real}" "$@"\n')
    (shim / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")

    def subcommands() -> list[str]:
        # run_git calls `git [-C <folder>] <subcommand> ...`; the tests' own helper `git -c <identity> ...`
        calls = [line.split() for line in log.read_text().splitlines()]
        return [words[2] if words[0] == "-C" else words[0] for words in calls if words[0] != "-c"]

    return subcommands


async def test_a_new_branch_costs_four_git_processes_and_records_where_it_started(
    settings: Settings, repo: Path, git_processes: Callable[[], list[str]]
) -> None:
    """The branch name's check, the committed `.isolator.toml`, the commits, the add; and once per
    FETCH_INTERVAL_SECONDS a look for origin (this repository has none)."""
    main = git("rev-parse", "main", cwd=repo).strip()

    ready = await create(settings, repo, "thread-1")
    again = await create(settings, repo, "thread-1b")

    assert (ready.created, ready.fresh_from) == (True, main)
    assert git("rev-parse", "HEAD", cwd=Path(ready.path)).strip() == main
    assert ready.base is not None and (ready.base.branch, ready.base.commit) == ("main", main)
    assert ready.base.fallback_reason == "the checkout has no `origin`"
    assert again.base == ready.base
    assert git_processes() == ["check-ref-format", "remote", "show", "cat-file", "worktree",
                               "check-ref-format", "show", "cat-file", "worktree"]


async def test_an_existing_branch_is_checked_out_as_it_is(settings: Settings, repo: Path) -> None:
    git("branch", "issue-7", cwd=repo)
    git("commit", "-q", "--allow-empty", "-m", "main moves on", cwd=repo)

    ready = await create(settings, repo, "issue-7")

    assert (ready.created, ready.fresh_from) == (True, None), "not a fresh branch: its work is its own"
    assert git("rev-parse", "HEAD", cwd=Path(ready.path)).strip() == git("rev-parse", "issue-7", cwd=repo).strip()


async def test_a_branch_kept_only_for_its_archive_starts_again_from_the_fresh_base(
    settings: Settings, repo: Path
) -> None:
    """Removed with nothing of its own committed, its branch stayed for the archive; main moved on. The
    next worktree for the work starts where a new branch would (the archive keeps the old files)."""
    first = await create(settings, repo, "issue-8")
    (Path(first.path) / "notes.txt").write_text("draft\n")
    removal = RemoveWorktreeInput(codebase_of(repo), first.path, "issue-8", force=True, environment_id="env-8")
    removed = await IsolationActivities(settings).remove_worktree(removal)
    git("commit", "-q", "--allow-empty", "-m", "main moves on", cwd=repo)
    main = git("rev-parse", "main", cwd=repo)

    again = await create(settings, repo, "issue-8")

    assert (removed.branch_outcome, again.created, again.fresh_from) == ("archived", True, main.strip())
    assert git("rev-parse", "HEAD", cwd=Path(again.path)).strip() == main.strip()
    assert archive_git(repo, "show", f"{removed.archive_refs[0]}:notes.txt") == "draft\n"


async def test_a_worktree_deleted_behind_gits_back_is_pruned_and_made_again(settings: Settings, repo: Path) -> None:
    first = await create(settings, repo, "thread-2")
    (Path(first.path) / "work.txt").write_text("work\n")
    git("add", "work.txt", cwd=Path(first.path))
    git("commit", "-q", "-m", "work", cwd=Path(first.path))
    shutil.rmtree(first.path)  # git still counts the branch as checked out there

    again = await create(settings, repo, "thread-2")

    assert (again.path, again.created) == (first.path, True)
    assert (Path(again.path) / "work.txt").read_text() == "work\n", "the branch and its commit are kept"
    assert worktree_paths(repo) == [again.path]


async def test_a_failed_add_leaves_no_folder_and_no_branch(settings: Settings, repo: Path) -> None:
    holder = settings.worktree_base / "elsewhere"
    git("worktree", "add", "-q", "-b", "taken", "--", str(holder), "main", cwd=repo)
    git("branch", "-m", "taken", "renamed", cwd=repo)  # the branch "taken" no longer exists: a new one is made

    with pytest.raises(Exception):
        await create(settings, repo, "renamed")  # checked out in another worktree: git refuses

    assert not (settings.worktree_base / "project" / "renamed").exists()
    assert sorted(branches(repo)) == ["main", "renamed"], "the existing branch is not deleted"


async def test_a_worktree_the_service_made_is_never_adopted(settings: Settings, repo: Path) -> None:
    ours = await create(settings, repo, "thread-3")
    by_hand = settings.worktree_base / "project" / "thread-4"
    git("worktree", "add", "-q", "-b", "thread-4", "--", str(by_hand), "main", cwd=repo)

    assert await adopt(settings, repo, "thread-3") == AdoptionSearch("none"), ours.path
    found = await adopt(settings, repo, "thread-4")
    assert found.outcome == "adoptable" and found.adoptable is not None
    assert Path(found.adoptable.path) == by_hand.resolve()


async def test_adoption_asked_on_another_host_says_so(settings: Settings, repo: Path) -> None:
    assert await adopt(settings, repo, "thread-5", host="other-host") == AdoptionSearch("elsewhere")


async def test_a_worktree_whose_folder_is_gone_is_not_adopted(settings: Settings, repo: Path) -> None:
    gone = settings.worktree_base / "project" / "thread-6"
    git("worktree", "add", "-q", "-b", "thread-6", "--", str(gone), "main", cwd=repo)
    shutil.rmtree(gone)

    assert await adopt(settings, repo, "thread-6") == AdoptionSearch("none")


async def test_adoption_runs_git_only_when_there_is_something_to_find(
    settings: Settings, repo: Path, git_processes: Callable[[], list[str]]
) -> None:
    """A first message with nothing at its expected path (the usual new conversation) lists no worktrees."""
    assert await adopt(settings, repo, "thread-7") == AdoptionSearch("none")
    assert git_processes() == []
    by_hand = settings.worktree_base / "project" / "thread-8"
    git("worktree", "add", "-q", "-b", "thread-8", "--", str(by_hand), "main", cwd=repo)  # not counted: the tests' own
    assert (await adopt(settings, repo, "thread-8")).outcome == "adoptable"
    assert git_processes()[-1] == "worktree", "something at the expected path: git says what it is"

