"""A worktree that cannot be made, end to end through the signed GitHub webhook: the message ends
with outcome "failed" on the first attempt, the user is told what happened and what to do, and
nothing is left behind: no directory under the worktree base, no branch, no environment."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import pytest

from isolator.contracts.message import Resolution, message_workflow_id
from tests.conftest import Stack
from tests.fakes.github_api import Comment, FakeGitHub
from tests.gitrepos import branches, git, worktree_paths
from tests.platforms.github import REPO, URL, deliver, issues_event
from tests.platforms.github_prs import (
    FORK,
    pr_opened,
    push_commit,
    settle,
    with_upstream,
)


async def create_attempts(stack: Stack, delivery: str) -> list[int]:
    """The attempt number of each run of the worktree's creation the message's history records: it is
    a local activity (`create_worktree_here`) when the codebase is on the worker's own host, as here."""
    history = await stack.temporal.get_workflow_handle(message_workflow_id("github", delivery)).fetch_history()
    markers = [
        json.loads(event.marker_recorded_event_attributes.details["data"].payloads[0].data)
        for event in history.events
        if event.marker_recorded_event_attributes.marker_name == "core_local_activity"
    ]
    return [marker["attempt"] for marker in markers if marker["activity_type"] == "create_worktree_here"]


async def assert_nothing_left(stack: Stack, codebase: dict, repo: Path, branches_before: list[str]) -> None:
    folder = stack.settings.worktree_base / codebase["name"]
    assert not folder.exists() or list(folder.iterdir()) == [], "no directory under the worktree base"
    assert branches(repo) == branches_before, "no branch"
    assert await stack.db.fetchval("SELECT count(*) FROM isolation_environments") == 0
    assert await stack.db.fetchval("SELECT count(*) FROM conversations WHERE environment_id IS NOT NULL") == 0


async def test_a_branch_checked_out_in_another_worktree_fails_cleanly(
    stack: Stack, fake: FakeGitHub, repo: Path
) -> None:
    codebase = await stack.register(repo, url=URL)
    elsewhere = repo.parent / "elsewhere"
    git("worktree", "add", "-q", "-b", "issue-7", str(elsewhere), cwd=repo)
    before = branches(repo)
    fake.add_issue(REPO, 7)

    response, delivery = await deliver(stack, "issues", issues_event("opened", 7, "@isolator please fix"))
    assert response.status_code == 202, response.text
    result = await settle(stack, delivery)

    assert (result.outcome, result.working_path, result.branch, result.environment_id) == ("failed", None, None, None)
    assert await create_attempts(stack, delivery) == [1], "a conflict is not retried"
    assert worktree_paths(repo) == [str(elsewhere)]
    await assert_nothing_left(stack, codebase, repo, before)
    assert fake.comments == [Comment(REPO, 7, (
        "Could not set up a worktree: Branch `issue-7` is already checked out in another worktree. "
        "Switch that worktree to another branch (or remove it), then send the message again."
    ))]

    # Once the user frees the branch, the next message gets its worktree.
    git("worktree", "remove", str(elsewhere), cwd=repo)
    response, again = await deliver(stack, "issues", issues_event("opened", 7, "@isolator try again"))
    assert (await settle(stack, again)).outcome == "created"
    assert worktree_paths(repo) == [str(stack.settings.worktree_base.resolve() / codebase["name"] / "issue-7")]


def fork_without_pull_ref(upstream: Path) -> tuple[str, str | None]:
    return "patch-1", FORK  # nothing under refs/pull/5/head


def fork_head_not_fetched(upstream: Path) -> tuple[str, str | None]:
    push_commit(upstream, "refs/pull/5/head", upstream.parent / "fork")  # an older head than the webhook's
    return "patch-1", FORK


def branch_gone(upstream: Path) -> tuple[str, str | None]:
    return "feature/gone", REPO  # deleted from origin after the PR was opened, and never local


MISSING_SHA = "f" * 40
CASES: dict[str, tuple[Callable[[Path], tuple[str, str | None]], str]] = {
    "fork-without-pull-ref": (
        fork_without_pull_ref,
        "Could not set up a worktree: Could not fetch `refs/pull/5/head` from origin: ",
    ),
    "fork-head-missing": (
        fork_head_not_fetched,
        f"Could not set up a worktree: The PR's head commit `{MISSING_SHA[:12]}` is not in the repository, even "
        "after fetching `refs/pull/5/head`. Push the PR again or check that it still exists.",
    ),
    "branch-gone": (
        branch_gone,
        "Could not set up a worktree: Could not fetch `refs/heads/feature/gone` from origin: ",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_a_pr_whose_head_cannot_be_found_fails_cleanly(
    stack: Stack, fake: FakeGitHub, repo: Path, case: str
) -> None:
    prepare, reply = CASES[case]
    upstream = with_upstream(repo)
    ref, head_repo = prepare(upstream)
    codebase = await stack.register(repo, url=URL)
    before = branches(repo)
    fake.add_pull(REPO, 5, ref, MISSING_SHA, head_repository="" if head_repo == REPO else head_repo)

    response, delivery = await deliver(stack, "pull_request", pr_opened(5, ref, MISSING_SHA, head_repo))
    assert response.status_code == 202, response.text
    result: Resolution = await settle(stack, delivery)

    assert (result.outcome, result.working_path, result.environment_id) == ("failed", None, None)
    assert await create_attempts(stack, delivery) == [1]
    assert worktree_paths(repo) == []
    await assert_nothing_left(stack, codebase, repo, before)
    (comment,) = fake.comments
    assert comment.number == 5 and comment.body.startswith(reply), comment.body
    if case != "fork-head-missing":
        assert comment.body.endswith(
            "Check that the PR's branch still exists and that the checkout's `origin` points at the repository."
        )
