"""The pull-request loop's reads and writes on GitHub, through the real PyGithub against the fake GitHub API:
a failing CI read whole (outputs, annotations, an Actions job's failing lines), the head's CI state, a review
read with its inline comments, and replies in its threads posted once however often the activity runs."""

from __future__ import annotations

from pathlib import Path
from typing import AsyncIterator

import pytest
from pydantic import SecretStr

from activities.results.pr_feedback import (
    ci_state,
    pull_request_mergeable,
    read_ci_failure,
    read_review,
    read_review_comment,
    reply_in_threads,
)
from isolator.contracts.pr_loop import ReviewComment, ThreadReply
from isolator.settings import Settings, load_settings
from tests.fakes.github_api import TOKEN, FakeGitHub
from tests.fakes.github_checks import ACTIONS_APP, Annotation, Check, Job, Step

REPO = "octo-org/hello-world"
HEAD = "a1b2c3d" + "0" * 33
MARKER = "<!-- isolator-run: run-1 -->"


@pytest.fixture
async def fake() -> AsyncIterator[FakeGitHub]:
    fake = FakeGitHub()
    await fake.start()
    fake.add_pull(REPO, 12, "isolator/issue-7", HEAD)
    yield fake
    await fake.stop()


@pytest.fixture
def settings(tmp_path: Path, fake: FakeGitHub) -> Settings:
    """Only GitHub: these reads need no database and no Temporal server."""
    return load_settings(data_dir=tmp_path / "data", worktree_base_setting=tmp_path / "worktrees", host="test-host",
                         github_token=SecretStr(TOKEN), github_api_url=fake.api_url)


def failing_tests_job() -> Job:
    passing = "\n".join(f"tests/test_{index}.py ." for index in range(300))
    return Job("tests (3.12)", "failure", steps=[
        Step("Set up job"),
        Step("Install", output="Successfully installed isolator-0.1"),
        Step("Test", "failure", output=passing + "\nFAILED tests/test_api.py::test_login - assert 401 == 200"),
        Step("Upload coverage", None),
    ], annotations=[Annotation("tests/test_api.py", 31, "assert 401 == 200"),
                    Annotation(".github", 1, "Node.js 16 actions are deprecated.", annotation_level="notice")])


async def test_a_failing_suite_is_read_with_its_outputs_annotations_and_the_failing_lines_of_its_log(
    settings: Settings, fake: FakeGitHub
) -> None:
    fake.checks.add_workflow_run(REPO, HEAD, "isolator/issue-7", "failure",
                                 jobs=[Job("lint", "success", steps=[Step("Ruff", output="All checks passed!")]),
                                       failing_tests_job()], pull_numbers=(12,))
    lint = Check("mypy", "failure", title="2 errors", summary="Found 2 errors in 1 file", text="api/app.py:3: error",
                 annotations=[Annotation("api/app.py", 3, "Incompatible return value type")])
    fake.checks.add_check_suite(REPO, HEAD, "failure", [lint, Check("docs", "cancelled"), Check("spell", "success")],
                                app={**ACTIONS_APP, "id": 2, "slug": "typing-bot", "name": "Typing bot"})

    failure = await read_ci_failure(settings, REPO, HEAD)

    assert (failure.repository, failure.head_sha) == (REPO, HEAD)
    assert [(check.name, check.conclusion) for check in failure.checks] == [("tests (3.12)", "failure"),
                                                                           ("mypy", "failure")]
    tests, mypy = failure.checks
    assert tests.annotations == ["tests/test_api.py:31: assert 401 == 200"]  # the notice left out
    excerpt = tests.log_excerpt.splitlines()
    assert excerpt[0] == "##[group]Run Test"
    assert excerpt[-2:] == ["FAILED tests/test_api.py::test_login - assert 401 == 200",
                            "##[error]Process completed with exit code 1."]
    assert len(excerpt) <= 152 and "Successfully installed isolator-0.1" not in tests.log_excerpt
    assert not any(line[:4].isdigit() for line in excerpt)  # no timestamps
    assert (mypy.title, mypy.summary, mypy.text, mypy.log_excerpt) == ("2 errors", "Found 2 errors in 1 file",
                                                                        "api/app.py:3: error", "")
    assert mypy.annotations == ["api/app.py:3: Incompatible return value type"]
    # The log is fetched through GitHub's redirect, with the token, and downloaded from the signed URL without it.
    assert fake.checks.calls("job_logs") == 1
    download = fake.server.received("GET", r"/_logs/\d+")
    assert len(download) == 1 and "authorization" not in download[0].headers


async def test_a_log_that_cannot_be_read_leaves_the_rest_of_the_failure(settings: Settings, fake: FakeGitHub) -> None:
    fake.checks.add_workflow_run(REPO, HEAD, "isolator/issue-7", "failure", jobs=[failing_tests_job()])
    fake.fail("job_logs", 403)
    [check] = (await read_ci_failure(settings, REPO, HEAD)).checks
    assert (check.name, check.log_excerpt, check.annotations) == ("tests (3.12)", "",
                                                                  ["tests/test_api.py:31: assert 401 == 200"])


async def test_failed_commit_statuses_count_as_failed_checks(settings: Settings, fake: FakeGitHub) -> None:
    fake.set_checks(HEAD, statuses=("success", "error"))
    [check] = (await read_ci_failure(settings, REPO, HEAD)).checks
    assert (check.name, check.conclusion) == ("ci/1", "error")
    assert await ci_state(settings, REPO, HEAD) == "red"


@pytest.mark.parametrize(("statuses", "check_runs", "state"), [
    ((), (), "pending"),  # no check has started yet
    (("success",), (("completed", "success"), ("completed", "skipped")), "green"),
    ((), (("completed", "failure"), ("completed", "success")), "red"),
    ((), (("completed", "timed_out"),), "red"),
    ((), (("completed", "failure"), ("in_progress", None)), "pending"),  # one run: wait for every verdict
    (("pending",), (("completed", "success"),), "pending"),
    (("error",), (("completed", "success"),), "red"),
    ((), (("completed", "success"), ("completed", "cancelled")), "pending"),  # cancelled is no verdict
])
async def test_the_ci_state_of_a_head(settings: Settings, fake: FakeGitHub, statuses: tuple[str, ...],
                                      check_runs: tuple[tuple[str, str | None], ...], state: str) -> None:
    fake.set_checks(HEAD, statuses=statuses, check_runs=check_runs)
    assert await ci_state(settings, REPO, HEAD) == state


async def test_a_review_is_read_whole_with_its_inline_comments(settings: Settings, fake: FakeGitHub) -> None:
    hunk = "@@ -10,6 +10,8 @@ def login(user):\n     token = issue(user)\n+    log(token)"
    review = fake.checks.add_review(REPO, 12, "CHANGES_REQUESTED", "Close, but not yet.", user="hubot", comments=[
        ("api/auth.py", 12, None, hunk, "Never log the token."),
        ("api/auth.py", 14, 10, hunk, "This block belongs in `issue`."),
        ("README.md", 3, None, "@@ -1,3 +1,3 @@\n-Old\n+New", "Typo: *Isolator*."),
    ])
    fake.checks.add_review(REPO, 12, "COMMENTED", "Another review", comments=[("api/auth.py", 1, None, hunk, "Other")])

    feedback = await read_review(settings, REPO, 12, review.review_id)

    assert (feedback.repository, feedback.number, feedback.review_id) == (REPO, 12, review.review_id)
    assert (feedback.state, feedback.body, feedback.author) == ("changes_requested", "Close, but not yet.", "hubot")
    ids = review.comment_ids
    assert feedback.comments == [
        ReviewComment(ids[0], "api/auth.py", 12, None, hunk, "Never log the token.", "hubot"),
        ReviewComment(ids[1], "api/auth.py", 14, 10, hunk, "This block belongs in `issue`.", "hubot"),
        ReviewComment(ids[2], "README.md", 3, None, "@@ -1,3 +1,3 @@\n-Old\n+New", "Typo: *Isolator*.", "hubot"),
    ]

    alone = await read_review_comment(settings, REPO, 12, ids[1])
    assert (alone.review_id, alone.state, alone.body, alone.author) == (None, "commented", "", "hubot")
    assert [comment.id for comment in alone.comments] == [ids[1]]


async def test_replies_are_posted_once_in_each_thread_even_when_the_activity_runs_again(
    settings: Settings, fake: FakeGitHub
) -> None:
    review = fake.checks.add_review(REPO, 12, comments=[
        ("api/auth.py", 12, None, "@@ -1 +1 @@", "Never log the token."),
        ("api/auth.py", 20, None, "@@ -1 +1 @@", "Rename this."),
    ])
    first, second = review.comment_ids
    replies = [ThreadReply(first, "Removed the log line."), ThreadReply(second, "Kept: the name is the API's.")]
    # An earlier run answered in the first thread: only its own marker counts.
    fake.checks.replies.clear()
    assert await reply_in_threads(settings, REPO, 12, replies[:1], "<!-- isolator-run: run-0 -->") == 1

    assert await reply_in_threads(settings, REPO, 12, replies, MARKER) == 2
    assert await reply_in_threads(settings, REPO, 12, replies, MARKER) == 0  # retried: nothing more

    ours = [reply for reply in fake.checks.replies if MARKER in reply.body]
    assert [(reply.in_reply_to, reply.body) for reply in ours] == [
        (first, f"Removed the log line.\n\n{MARKER}"), (second, f"Kept: the name is the API's.\n\n{MARKER}")]


async def test_a_reply_to_a_reply_counts_in_its_thread(settings: Settings, fake: FakeGitHub) -> None:
    first = fake.checks.add_review(REPO, 12, comments=[("a.py", 1, None, "@@ -1 +1 @@", "Why?")]).comment_ids[0]
    again = fake.checks.add_thread_reply(REPO, 12, first, "Still why?").comment_ids[0]
    assert await reply_in_threads(settings, REPO, 12, [ThreadReply(again, "Because.")], MARKER) == 1
    assert await reply_in_threads(settings, REPO, 12, [ThreadReply(first, "Because.")], MARKER) == 0
    assert [(reply.in_reply_to, reply.body) for reply in fake.checks.replies] == [(first, f"Because.\n\n{MARKER}")]


async def test_mergeable_is_unknown_until_github_has_computed_it(settings: Settings, fake: FakeGitHub) -> None:
    assert await pull_request_mergeable(settings, REPO, 12) is True
    fake.checks.set_mergeable(REPO, 12, None, "unknown")
    assert await pull_request_mergeable(settings, REPO, 12) is None
    fake.checks.set_mergeable(REPO, 12, False, "dirty")
    assert await pull_request_mergeable(settings, REPO, 12) is False
