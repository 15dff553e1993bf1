"""The pull-request loop's histories for tests/workflows/test_replay.py: a red CI's fix run, and a review
with its threads' replies, captured from real runs (`ISOLATOR_CAPTURE_HISTORIES=1`, as that module says)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Stack
from tests.fakes.github_api import FakeGitHub
from tests.platforms.github import REPO, deliver
from tests.platforms.github_ci import pull_request_review_submitted
from tests.results import final_message, tip
from tests.workflows.github.test_pr_loop import issue_with_a_pr, loop_result, red, settings  # noqa: F401  (fixture)
from tests.workflows.test_replay import store


@pytest.mark.capture
async def test_capture_pull_request_loop_histories(stack: Stack, fake: FakeGitHub, repo: Path) -> None:
    origin, number, head = await issue_with_a_pr(stack, fake, repo)

    red_ci = await red(stack, fake, head, number)
    fixing = await loop_result(stack, red_ci)
    await final_message(stack.db, fixing.run_id, "(pushed 1 commit)")
    fixed = tip(origin, "refs/heads/issue-42")
    assert fixed is not None

    review = fake.checks.add_review(REPO, number, "CHANGES_REQUESTED", "One thing.",
                                    [("app.py", 3, None, "@@ -1,3 +1,3 @@\n-a\n+b", "Why b?")], user="reviewer")
    response, _ = await deliver(stack, "pull_request_review", pull_request_review_submitted(
        REPO, number, review.review_id, "changes_requested", "One thing.", "reviewer", fixed, "issue-42",
        api_url=fake.api_url))
    reviewed = response.json()["workflow_id"]
    assert (await loop_result(stack, reviewed)).outcome == "run"
    assert len(fake.checks.replies) == 1

    store("pr_loop_red_ci", await stack.temporal.get_workflow_handle(red_ci).fetch_history(), stack.tmp_path)
    store("pr_loop_review", await stack.temporal.get_workflow_handle(reviewed).fetch_history(), stack.tmp_path)
