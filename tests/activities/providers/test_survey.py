"""The survey activity against real git repositories: worktree states, orphans, and how many git processes it costs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from activities.environments.isolation import IsolationActivities
from activities.git.runner import run_git
from activities.providers import build_providers
from activities.providers.worktree.survey import list_worktrees
from isolator.contracts.worktree import SurveyInput, TrackedWorktree, WorktreeState
from isolator.settings import Settings, load_settings
from tests.gitrepos import git, make_repo
from tests.worktrees import CountingGit, add_worktree, codebase_of, commit


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Only folders: the survey needs no database and no Temporal server."""
    return load_settings(data_dir=tmp_path / "data", worktree_base_setting=tmp_path / "worktrees", host="test-host")


def tracked(*paths: tuple[str, Path], stale: bool = False) -> list[TrackedWorktree]:
    """Stale ones are cleanup candidates: a survey for a cleanup asks whether their work is unpushed."""
    return [
        TrackedWorktree(environment_id=f"env-{branch}", working_path=str(path), branch=branch, stale=stale)
        for branch, path in paths
    ]


def by_branch(states: list[WorktreeState]) -> dict[str, tuple[bool, bool, bool]]:
    return {state.branch: (state.exists, state.merged, state.unpushed) for state in states}


async def test_states_and_orphans(settings: Settings, repo: Path, tmp_path: Path) -> None:
    merged = add_worktree(settings, repo, "merged", commits=1)
    git("merge", "-q", "--no-ff", "-m", "merge", "merged", cwd=repo)
    squashed = add_worktree(settings, repo, "squashed", commits=2)
    git("merge", "-q", "--squash", "squashed", cwd=repo)
    git("commit", "-q", "-m", "squash", cwd=repo)
    solo = add_worktree(settings, repo, "solo", commits=1)
    (solo / "notes.txt").write_text("untracked\n")
    fresh = add_worktree(settings, repo, "fresh")
    gone = add_worktree(settings, repo, "gone", commits=1)
    shutil.rmtree(gone)
    plain = settings.worktree_base / "project" / "plain"
    plain.mkdir()
    stray = add_worktree(settings, repo, "stray")
    git("worktree", "add", "-q", "-b", "outside", "--", str(tmp_path / "outside"), "main", cwd=repo)
    entries = tracked(
        ("merged", merged), ("squashed", squashed), ("solo", solo), ("fresh", fresh), ("gone", gone), ("plain", plain),
        stale=True,
    )

    survey = await IsolationActivities(settings).survey_worktrees(
        SurveyInput(codebase=codebase_of(repo), tracked=entries, plans_cleanup=True))

    #                           exists merged unpushed
    assert by_branch(survey.states) == {
        "merged": (True, True, False),
        "squashed": (True, True, False),
        "solo": (True, False, True),
        "fresh": (True, True, False),
        "gone": (False, False, False),  # the directory is gone: removal asks about its branch itself
        "plain": (False, False, False),  # no such branch
    }
    assert [state.environment_id for state in survey.states] == [entry.environment_id for entry in entries]
    assert survey.orphans == [str(stray)]


async def test_merged_is_proven_and_the_proof_names_the_check(settings: Settings, repo: Path) -> None:
    """A squash of three commits, a rebase merge and a merge commit are merged, each by its own check;
    a squash with one commit more after it, and work merged nowhere, are not."""
    squashed = add_worktree(settings, repo, "squashed", commits=3)
    git("merge", "-q", "--squash", "squashed", cwd=repo)
    git("commit", "-q", "-m", "squash of three", cwd=repo)
    rebased = add_worktree(settings, repo, "rebased", commits=3)
    commit(repo, "meanwhile.txt", "main moved on\n")  # so that the picked commits are new ones
    for number in range(3):  # as a rebase merge lands them: the same patches, new commits
        git("cherry-pick", f"rebased~{2 - number}", cwd=repo)
    merge_commit = add_worktree(settings, repo, "merge-commit", commits=2)
    git("merge", "-q", "--no-ff", "-m", "merge", "merge-commit", cwd=repo)
    one_more = add_worktree(settings, repo, "one-more", commits=3)
    git("merge", "-q", "--squash", "one-more", cwd=repo)
    git("commit", "-q", "-m", "squash", cwd=repo)
    commit(one_more, "after.txt", "one commit after the squash\n")
    unmerged = add_worktree(settings, repo, "unmerged", commits=2)
    entries = tracked(("squashed", squashed), ("rebased", rebased), ("merge-commit", merge_commit),
                      ("one-more", one_more), ("unmerged", unmerged))

    survey = await IsolationActivities(settings).survey_worktrees(SurveyInput(codebase=codebase_of(repo), tracked=entries))

    proofs = {state.branch: (state.merged, state.merge_proof) for state in survey.states}
    assert proofs == {
        "squashed": (True, "its whole change is in `main`: merging it again changes nothing (a squash merge)"),
        "rebased": (True, "every one of its 3 commit(s) is in `main` by patch id (a rebase merge)"),
        "merge-commit": (True, "its tip is an ancestor of `main`"),
        "one-more": (False, None),
        "unmerged": (False, None),
    }


async def test_remotes_count_for_merged_and_pushed(settings: Settings, tmp_path: Path) -> None:
    seed = make_repo(tmp_path / "seed")
    origin = tmp_path / "origin.git"
    git("clone", "-q", "--bare", str(seed), str(origin), cwd=tmp_path)
    git("clone", "-q", str(origin), "project", cwd=tmp_path)
    repository = tmp_path / "project"
    pushed = add_worktree(settings, repository, "pushed", commits=1)
    git("push", "-q", "origin", "pushed", cwd=pushed)
    upstream = add_worktree(settings, repository, "upstream", commits=1)
    git("push", "-q", "origin", "upstream", cwd=upstream)
    # merged on the server, then fetched: only origin/main has it, the local main is behind
    git("clone", "-q", str(origin), "elsewhere", cwd=tmp_path)
    git("merge", "-q", "--no-ff", "-m", "merge", "origin/upstream", cwd=tmp_path / "elsewhere")
    git("push", "-q", "origin", "main", cwd=tmp_path / "elsewhere")
    git("fetch", "-q", "origin", cwd=repository)
    git("push", "-q", "origin", "--delete", "upstream", cwd=repository)
    local = add_worktree(settings, repository, "local", commits=1)
    entries = tracked(("pushed", pushed), ("upstream", upstream), ("local", local), stale=True)

    survey = await IsolationActivities(settings).survey_worktrees(
        SurveyInput(codebase=codebase_of(repository), tracked=entries, plans_cleanup=True)
    )

    assert by_branch(survey.states) == {
        "pushed": (True, False, False),
        "upstream": (True, True, False),
        "local": (True, False, True),
    }
    assert survey.orphans == []


async def test_git_processes_do_not_grow_with_worktrees_that_need_no_question(settings: Settings, repo: Path) -> None:
    """Half merged by ancestry, half with a commit of their own in live conversations: the ancestry
    answers the first, one batch proves the others unmerged (unmerged_by_paths), whatever their number."""
    entries = tracked(*((f"wt-{n}", add_worktree(settings, repo, f"wt-{n}", commits=n % 2)) for n in range(20)))
    commit(repo, "main-moved-on.txt", "so no branch is main itself\n")
    counts = []
    for size in (0, 10, 20):
        counter = CountingGit()
        survey = await IsolationActivities(settings, build_providers(settings, git=counter)).survey_worktrees(
            SurveyInput(codebase=codebase_of(repo), tracked=entries[:size], plans_cleanup=True)
        )
        assert len(survey.states) == size
        assert len(survey.orphans) == 20 - size
        assert [state.merged for state in survey.states] == [n % 2 == 0 for n in range(size)]
        counts.append(counter.calls)

    constant, ten, twenty = counts
    assert constant <= 3  # worktree list, refs, ancestry
    assert ten == twenty <= constant + 4, counts  # and the batch


async def test_fresh_branches_in_live_conversations_cost_no_git_process(settings: Settings, repo: Path) -> None:
    start = git("rev-parse", "HEAD", cwd=repo).strip()
    entries = [
        TrackedWorktree(f"env-{n}", str(add_worktree(settings, repo, f"new-{n}")), f"new-{n}", start_commit=start)
        for n in range(5)
    ]
    counter = CountingGit()
    survey = await IsolationActivities(settings, build_providers(settings, git=counter)).survey_worktrees(
        SurveyInput(codebase=codebase_of(repo), tracked=entries)
    )
    assert counter.calls == 3  # the listing, the refs, ancestry
    assert [(state.exists, state.merged, state.tip) for state in survey.states] == [(True, True, start)] * 5


async def test_listed_paths_are_resolved_through_symlinked_folders_and_worktrees(repo: Path, tmp_path: Path) -> None:
    """Folders are resolved once for all their worktrees; a worktree that is itself a symlink, or a
    path gone from disk, is resolved on its own; every answer equals `Path.resolve()`."""
    real = tmp_path / "real"
    real.mkdir()
    via = tmp_path / "via"
    via.symlink_to(real, target_is_directory=True)
    for name in ("a", "b", "gone"):
        git("worktree", "add", "-q", "-b", name, str(via / name), cwd=repo)
    # A worktree moved away by hand and replaced by a symlink: git still lists the old path.
    git("worktree", "add", "-q", "-b", "linked", str(real / "linked"), cwd=repo)
    (real / "linked").rename(tmp_path / "moved")
    (real / "linked").symlink_to(tmp_path / "moved", target_is_directory=True)
    shutil.rmtree(real / "gone")

    listed = await list_worktrees(run_git, repo)
    paths = {entry.branch: entry.path for entry in listed}
    assert paths["a"] == real / "a" and paths["b"] == real / "b"
    assert paths["gone"] == (via / "gone").resolve() == real / "gone"
    assert paths["linked"] == (tmp_path / "moved").resolve()
    assert all(entry.path == entry.path.resolve() for entry in listed)
    assert [entry.branch for entry in listed if entry.prunable] == ["gone"]
