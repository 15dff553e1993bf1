"""A command on the service's own PR, before anyone has written there (issue 47, item 1): the PR's
conversation finds the worktree whose branch is the PR's head, as a message there does, and creates nothing.

The agent opens a draft PR from its issue's worktree; a colleague pushes to it and CI goes red; the PR's
first comment is `/fix-ci`. Real git (origin a local bare repository), the fake GitHub with check runs,
real PostgreSQL and Temporal, and a small real agent (tests/agents/changer.py) that commits one file per run."""

from __future__ import annotations

from pathlib import Path

import pytest

from isolator.contracts.message import Resolution
from isolator.contracts.pr_loop import LoopDecision
from isolator.settings import Settings
from tests.agents import command
from tests.conftest import Stack
from tests.fakes.github_api import FakeGitHub
from tests.fakes.github_checks import Check
from tests.platforms.github import REPO, URL, comment_event, deliver
from tests.platforms.github_ci import check_suite_completed
from tests.platforms.github_prs import push_commit, settle
from tests.gitrepos import git
from tests.results import eventually, final_message, say_on_issue, tip, with_github_origin
from workflows.pr_loop import PullRequestLoopWorkflow

ISSUE = 42
BRANCH = f"issue-{ISSUE}"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"agent_command_line": command("changer")})


async def issue_with_a_pr(stack: Stack, fake: FakeGitHub, repo: Path) -> tuple[Path, int]:
    """The issue's first run and its draft PR (whose body closes the issue): (origin, the PR's number)."""
    origin = fake.origin = with_github_origin(repo)
    fake.add_issue(REPO, ISSUE)
    await stack.register(repo, url=URL)
    first = await say_on_issue(stack, ISSUE, "@isolator please fix the login", opened=True)
    await final_message(stack.db, first, "Draft PR #")
    return origin, fake.created_pulls[0]["number"]


async def on_pr(stack: Stack, number: int, text: str) -> Resolution:
    response, delivery = await deliver(stack, "issue_comment", comment_event(number, text, pull=True))
    assert response.status_code == 202, response.text
    return await settle(stack, delivery)


async def said_on(fake: FakeGitHub, number: int) -> list[str]:
    return [comment.body for comment in fake.comments if comment.number == number]


async def worktree_rows(stack: Stack) -> list[tuple[str, str]]:
    return [tuple(row) for row in await stack.db.fetch(
        "SELECT branch_name, working_path FROM isolation_environments ORDER BY created_at")]


async def test_fix_ci_as_the_prs_first_comment_runs_in_the_issues_worktree_and_the_pr_hears_it_pass(
    stack: Stack, fake: FakeGitHub, repo: Path, tmp_path: Path
) -> None:
    origin, number = await issue_with_a_pr(stack, fake, repo)
    before = await worktree_rows(stack)
    # A colleague pushes to the PR's branch, and CI goes red on their head.
    colleague = tmp_path / "colleague"
    git("clone", "-q", "--branch", BRANCH, str(origin), str(colleague), cwd=tmp_path)
    theirs = push_commit(origin, f"refs/heads/{BRANCH}", colleague, "A colleague's change")
    suite = fake.checks.add_check_suite(REPO, theirs, "failure", head_branch=BRANCH, pull_numbers=(number,),
                                        check_runs=[Check("lint", "failure", title="1 problem")])
    response, _ = await deliver(stack, "check_suite", check_suite_completed(
        REPO, suite.suite_id, theirs, BRANCH, "failure", (number,), api_url=fake.api_url))
    assert response.status_code == 202, response.text

    # The PR's first comment: the PR's conversation shares the issue's worktree, and the agent fixes CI there.
    asked = await on_pr(stack, number, "@isolator /fix-ci")
    assert asked.outcome == "command", asked
    assert asked.replies == [f"Reusing worktree from issue #{ISSUE}", "The agent works on CI's failures."], asked
    assert await worktree_rows(stack) == before, "nothing created: the issue's worktree is the PR's"
    run_id = await stack.db.fetchval("SELECT id::text FROM agent_runs WHERE message LIKE $1",
                                     f"%CI failed on {theirs[:7]}%")
    assert run_id is not None
    await final_message(stack.db, run_id, "(pushed 1 commit)")
    fixed = tip(origin, f"refs/heads/{BRANCH}")
    assert fixed is not None and fixed != theirs

    # The fix's head goes green: the PR's conversation, where `/fix-ci` was asked, hears it.
    green = fake.checks.add_check_suite(REPO, fixed, "success", head_branch=BRANCH, pull_numbers=(number,),
                                        check_runs=[Check("lint", "success")])
    response, _ = await deliver(stack, "check_suite", check_suite_completed(
        REPO, green.suite_id, fixed, BRANCH, "success", (number,), api_url=fake.api_url))
    handle = stack.temporal.get_workflow_handle_for(PullRequestLoopWorkflow.run, response.json()["workflow_id"])
    assert await handle.result() == LoopDecision("passed")

    async def heard() -> bool:
        return f"CI passed on `{fixed[:7]}` after 1 fix." in await said_on(fake, number)
    await eventually(heard, "CI passed, on the PR", seconds=10)
    assert (await said_on(fake, number)).count(f"CI passed on `{fixed[:7]}` after 1 fix.") == 1


async def test_status_and_update_branch_as_the_prs_first_comments_find_the_issues_worktree(
    stack: Stack, fake: FakeGitHub, repo: Path
) -> None:
    _, number = await issue_with_a_pr(stack, fake, repo)
    before = await worktree_rows(stack)

    status = await on_pr(stack, number, "@isolator /status")
    assert status.outcome == "command" and status.replies[0] == f"Reusing worktree from issue #{ISSUE}", status
    assert f"`{BRANCH}`" in status.replies[1] and f"PR: draft #{number} (open)" in status.replies[1], status
    update = await on_pr(stack, number, "@isolator /update-branch")
    assert update.replies == ["The agent merges the base into the branch."], update
    assert await worktree_rows(stack) == before, "nothing created"

    # A PR nobody worked on: the command finds no worktree, and makes none.
    fake.add_pull(REPO, number + 1, "feature/y", "c" * 40)
    nobody = await on_pr(stack, number + 1, "@isolator /fix-ci")
    assert nobody.replies == ["This conversation has no worktree, so no pull request: send the agent a message first."]
    assert await worktree_rows(stack) == before
