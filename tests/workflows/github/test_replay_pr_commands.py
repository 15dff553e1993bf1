"""Histories for tests/workflows/test_replay.py of a command on the service's own PR before anyone wrote there:
`/fix-ci` finds the issue's worktree, its loop reads the head's CI at once, and the fixed head's green loop
says so in the PR's conversation too. Captured from real runs (`ISOLATOR_CAPTURE_HISTORIES=1`, as that
module says)."""

from __future__ import annotations

from pathlib import Path

import pytest

from isolator.contracts.message import message_workflow_id
from tests.conftest import Stack
from tests.fakes.github_api import FakeGitHub
from tests.fakes.github_checks import Check
from tests.platforms.github import REPO, comment_event, deliver
from tests.platforms.github_ci import check_suite_completed
from tests.platforms.github_prs import settle
from tests.results import final_message, tip
from tests.workflows.github.test_commands_on_own_pr import BRANCH, issue_with_a_pr, settings  # noqa: F401  (fixture)
from tests.workflows.test_replay import store
from workflows.pr_loop import PullRequestLoopWorkflow


@pytest.mark.capture
async def test_capture_pull_request_command_histories(stack: Stack, fake: FakeGitHub, repo: Path) -> None:
    origin, number = await issue_with_a_pr(stack, fake, repo)
    head = tip(origin, f"refs/heads/{BRANCH}")
    assert head is not None
    fake.checks.add_check_suite(REPO, head, "failure", head_branch=BRANCH, pull_numbers=(number,),
                                check_runs=[Check("lint", "failure")])

    response, delivery = await deliver(stack, "issue_comment", comment_event(number, "@isolator /fix-ci", pull=True))
    assert response.status_code == 202, response.text
    assert (await settle(stack, delivery)).replies[-1] == "The agent works on CI's failures."
    command = message_workflow_id("github", delivery)
    fixing = f"pr-loop:{REPO}:fix_ci:{command}"
    run_id = (await stack.temporal.get_workflow_handle_for(PullRequestLoopWorkflow.run, fixing).result()).run_id
    assert run_id is not None
    await final_message(stack.db, run_id, "(pushed 1 commit)")
    fixed = tip(origin, f"refs/heads/{BRANCH}")
    assert fixed is not None

    green = fake.checks.add_check_suite(REPO, fixed, "success", head_branch=BRANCH, pull_numbers=(number,),
                                        check_runs=[Check("lint", "success")])
    response, _ = await deliver(stack, "check_suite", check_suite_completed(
        REPO, green.suite_id, fixed, BRANCH, "success", (number,), api_url=fake.api_url))
    passed = response.json()["workflow_id"]
    assert (await stack.temporal.get_workflow_handle_for(PullRequestLoopWorkflow.run, passed).result()).outcome \
        == "passed"

    for name, workflow_id in (("message_command_on_pr", command), ("pr_loop_fix_ci", fixing),
                              ("pr_loop_green_said_on_pr", passed)):
        store(name, await stack.temporal.get_workflow_handle(workflow_id).fetch_history(), stack.tmp_path)
