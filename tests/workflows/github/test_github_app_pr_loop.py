"""The pull-request loop as the GitHub App: a red head its `<slug>[bot]` pushed is the service's even when
no row recorded the push (the worker died between the push and its row), so the agent fixes it."""

from __future__ import annotations

from pathlib import Path

import pytest

from isolator.settings import Settings
from tests.agents import command
from tests.conftest import Stack
from tests.fakes.github_api import FakeGitHub
from tests.fakes.github_app import App
from tests.platforms.github import REPO, URL, deliver
from tests.platforms.github_app import SLUG, acting_as, github_app, installation  # noqa: F401  (fixtures)
from tests.platforms.github_ci import workflow_run_completed
from tests.results import final_message, say_on_issue, tip, with_github_origin
from workflows.pr_loop import PullRequestLoopWorkflow


@pytest.fixture
def settings(settings: Settings, github_app: App, installation: int) -> Settings:
    return acting_as(settings, github_app).model_copy(update={"agent_command_line": command("changer"),
                                                             "autofix_max_attempts": 2})


@pytest.mark.parametrize("pusher, outcome", [(f"{SLUG}[bot]", "run"), ("octocat", "ignored")])
async def test_a_red_head_the_app_pushed_is_ours_without_its_row(stack: Stack, fake: FakeGitHub, repo: Path,
                                                                 pusher: str, outcome: str) -> None:
    origin = fake.origin = with_github_origin(repo)
    fake.add_issue(REPO, 42)
    await stack.register(repo, url=URL)
    first = await say_on_issue(stack, 42, f"@{SLUG} please fix the login", opened=True)
    await final_message(stack.db, first, "Draft PR #")
    (pull,) = fake.created_pulls
    head = tip(origin, "refs/heads/issue-42")
    assert head is not None
    assert await stack.db.execute("DELETE FROM pushed_heads") == "DELETE 1"  # the push's row, lost

    run = fake.checks.add_workflow_run(REPO, head, "issue-42", "failure", pull_numbers=(pull["number"],))
    payload = workflow_run_completed(REPO, run.run_id, head, "issue-42", "failure", (pull["number"],),
                                     check_suite_id=run.check_suite_id, api_url=fake.api_url, sender_login=pusher)
    response, _ = await deliver(stack, "workflow_run", payload)
    assert response.status_code == 202, response.text
    decision = await stack.temporal.get_workflow_handle_for(PullRequestLoopWorkflow.run,
                                                            response.json()["workflow_id"]).result()
    assert decision.outcome == outcome, decision
