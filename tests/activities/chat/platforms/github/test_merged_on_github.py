"""Merged as GitHub proves it: a PR that GitHub says was merged counts only when its head is the
branch's tip, and only when the cleanup asks (the survey on real git, GitHub through PyGithub to the fake)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from activities.environments.isolation import IsolationActivities
from isolator.cleanup_rules import pull_request_of
from isolator.contracts.environment import EnvironmentRef
from isolator.contracts.worktree import SurveyInput, TrackedWorktree
from isolator.settings import Settings
from tests.fakes.github_api import FakeGitHub
from tests.gitrepos import git
from tests.platforms.github import REPO, URL
from tests.worktrees import add_worktree, codebase_of, commit


async def test_github_merged_counts_only_at_the_branchs_tip(settings: Settings, fake: FakeGitHub, repo: Path) -> None:
    # Merged on GitHub (the merge is on origin only; this checkout has not fetched it).
    at_tip = add_worktree(settings, repo, "feature/at-tip", commits=2)
    tip = git("rev-parse", "HEAD", cwd=at_tip).strip()
    fake.add_pull(REPO, 5, "feature/at-tip", tip)["merged"] = True
    # Merged on GitHub, then one more commit on the branch: what was merged is not all of it.
    moved_on = add_worktree(settings, repo, "feature/moved-on", commits=2)
    fake.add_pull(REPO, 6, "feature/moved-on", git("rev-parse", "HEAD", cwd=moved_on).strip())["merged"] = True
    commit(moved_on, "later.txt", "after the merge\n")
    # Open on GitHub.
    still_open = add_worktree(settings, repo, "feature/open", commits=1)
    fake.add_pull(REPO, 7, "feature/open", git("rev-parse", "HEAD", cwd=still_open).strip())
    tracked = [TrackedWorktree(f"env-{number}", str(path), branch, pull_request=f"{REPO}#{number}")
               for number, path, branch in [(5, at_tip, "feature/at-tip"), (6, moved_on, "feature/moved-on"),
                                            (7, still_open, "feature/open")]]
    survey = IsolationActivities(settings).survey_worktrees

    asked = await survey(SurveyInput(codebase_of(repo), tracked, ask_github=True))
    assert {state.branch: (state.merged, state.merge_proof) for state in asked.states} == {
        "feature/at-tip": (True, f"GitHub says PR #5 was merged, and its head `{tip[:7]}` is the branch's tip"),
        "feature/moved-on": (False, None),
        "feature/open": (False, None),
    }

    # `/status` does not wait for GitHub; and GitHub away leaves git's word standing.
    calls = len(fake.server.received("GET", r".*/pulls/\d+"))
    not_asked = await survey(SurveyInput(codebase_of(repo), tracked, measure_disk=True))
    assert [state.merged for state in not_asked.states] == [False, False, False]
    assert len(fake.server.received("GET", r".*/pulls/\d+")) == calls
    fake.fail("pull", 500, times=10)
    away = await survey(SurveyInput(codebase_of(repo), tracked, ask_github=True))
    assert [state.merged for state in away.states] == [False, False, False]


def test_a_github_prs_environment_names_its_pull_request_and_others_none(repo: Path) -> None:
    codebase = dataclasses.replace(codebase_of(repo), repository_url=f"{URL}.git")
    pr = EnvironmentRef("e1", codebase, "/w/pr", "feature/x", "pr", "43", platform="github")
    assert pull_request_of(pr) == f"{REPO}#43"
    ssh = dataclasses.replace(pr, codebase=dataclasses.replace(codebase, repository_url=f"git@github.com:{REPO}.git"))
    assert pull_request_of(ssh) == f"{REPO}#43"
    assert pull_request_of(dataclasses.replace(pr, workflow_type="issue")) is None
    assert pull_request_of(dataclasses.replace(pr, platform="slack")) is None
    assert pull_request_of(dataclasses.replace(pr, codebase=codebase_of(repo))) is None  # no URL: a local checkout
