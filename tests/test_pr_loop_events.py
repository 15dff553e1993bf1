"""Reading the pull-request loop's GitHub events (api/platforms/github/feedback.py), and an inline comment
made alone as a message that says where it is: pure functions, on octokit/webhooks-shaped payloads."""

from __future__ import annotations

import pytest

from api.platforms.github.events import GitHubMessage, Ignored, PayloadError, parse_event
from api.platforms.github.feedback import Feedback, parse_feedback
from isolator.contracts.pr_loop import workflow_key
from tests.platforms.github import REPO, repository
from tests.platforms.github_ci import (
    check_suite_completed,
    pull_request_review_comment_created,
    pull_request_review_submitted,
    workflow_run_completed,
)

SHA = "c" * 40


def test_a_red_check_suite_and_workflow_run_of_one_head_share_one_key() -> None:
    suite = parse_feedback("check_suite", check_suite_completed(REPO, 1, SHA, "issue-42", "failure", (7,)))
    run = parse_feedback("workflow_run", workflow_run_completed(REPO, 2, SHA, "issue-42", "timed_out", (7,)))
    assert isinstance(suite, Feedback) and isinstance(run, Feedback)
    assert workflow_key(suite.event) == workflow_key(run.event) == f"pr-loop:{REPO}:ci-red:{SHA}"
    assert (suite.event.number, suite.event.head_branch, suite.sender) == (7, "issue-42", None), "CI has no person"


def test_green_reports_are_each_looked_at_and_other_conclusions_say_nothing() -> None:
    first = parse_feedback("check_suite", check_suite_completed(REPO, 1, SHA, "x", "success"))
    second = parse_feedback("check_suite", check_suite_completed(REPO, 2, SHA, "x", "success"))
    assert isinstance(first, Feedback) and isinstance(second, Feedback)
    assert first.event.key != second.event.key and first.event.conclusion == "success"
    assert isinstance(parse_feedback("check_suite", check_suite_completed(REPO, 3, SHA, "x", "cancelled")), Ignored)


def test_a_review_carries_its_author_for_the_sender_rules_and_an_approval_asks_nothing() -> None:
    review = parse_feedback("pull_request_review", pull_request_review_submitted(
        REPO, 7, 99, "changes_requested", "Please rename", "mallory", SHA, "issue-42", association="NONE"))
    assert isinstance(review, Feedback)
    assert (review.event.kind, review.event.key, review.event.review_id) == ("review", "review:99", 99)
    assert review.sender is not None and (review.sender.login, review.sender.association) == ("mallory", "NONE")
    approval = parse_feedback("pull_request_review", pull_request_review_submitted(
        REPO, 7, 100, "approved", "", "reviewer", SHA, "issue-42"))
    assert isinstance(approval, Ignored)


def test_a_push_to_the_default_branch_only_is_the_base_moving() -> None:
    moved = parse_feedback("push", {"ref": "refs/heads/main", "after": SHA, "repository": repository()})
    assert isinstance(moved, Feedback)
    assert (moved.event.kind, moved.event.conclusion, moved.event.head_branch) == ("update_branch", "base_moved", "main")
    assert parse_feedback("push", {"ref": "refs/heads/feature", "after": SHA, "repository": repository()}) is None
    assert parse_feedback("issues", {"action": "opened"}) is None, "the loop reads only its own events"


def test_a_malformed_loop_event_is_refused_with_what_is_wrong() -> None:
    payload = check_suite_completed(REPO, 1, SHA, "x", "failure")
    del payload["check_suite"]["head_sha"]
    with pytest.raises(PayloadError, match="check_suite.head_sha"):
        parse_feedback("check_suite", payload)


def test_an_inline_comment_made_alone_says_its_file_lines_and_hunk() -> None:
    payload = pull_request_review_comment_created(
        REPO, 7, 5, 6, "app/main.py", 14, "@isolator name this better", "reviewer", SHA, "issue-42",
        diff_hunk="@@ -10,4 +10,5 @@\n+    x = 1", start_line=12)
    message = parse_event("pull_request_review_comment", payload, "@isolator")
    assert isinstance(message, GitHubMessage)
    assert message.text.startswith("@isolator name this better\n\n(An inline comment on `app/main.py`, lines 12-14.)")
    assert "```diff\n@@ -10,4 +10,5 @@\n+    x = 1\n```" in message.text
