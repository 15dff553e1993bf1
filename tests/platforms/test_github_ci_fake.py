"""The fake GitHub API's CI and review routes, read through the real PyGithub (in a thread, as the
activities call it): check suites, check runs with output and annotations, workflow runs, jobs and
their logs behind GitHub's redirect, reviews and their comments, replies; and the webhook payloads
of tests/platforms/github_ci.py next to what the fake serves."""

from __future__ import annotations

import asyncio
from typing import Any, Callable, TypeVar

import pytest
import requests
from github import Auth, Github, GithubException

from tests.fakes.github_api import TOKEN, FakeGitHub
from tests.fakes.github_checks import Annotation, Check, Job, Step
from tests.platforms.github import REPO
from tests.platforms.github import fake as fake  # noqa: F401  (fixture)
from tests.platforms.github_ci import (
    check_suite_completed,
    pull_request_review_comment_created,
    pull_request_review_submitted,
    workflow_run_completed,
)

SHA = "c" * 40
T = TypeVar("T")


async def through_pygithub(fake: FakeGitHub, work: Callable[[Github], T], token: str | None = TOKEN) -> T:
    def run() -> T:
        with Github(base_url=fake.api_url, auth=Auth.Token(token) if token else None, retry=None, lazy=True) as github:
            return work(github)

    return await asyncio.to_thread(run)


async def test_pygithub_reads_a_check_suite_its_check_runs_and_their_annotations(fake: FakeGitHub) -> None:
    fake.add_pull(REPO, 7, "feature/x", SHA)
    fake.set_checks(SHA, check_runs=(("completed", "success"),))
    lint = Check("lint", "failure", title="2 problems", summary="ruff found 2 problems", text="F401, E501",
                 annotations=[Annotation("app/main.py", 3, "`os` imported but unused", title="F401"),
                              Annotation("app/main.py", 10, "Line too long", end_line=12, annotation_level="warning")])
    suite_id, (lint_id, tests_id) = fake.checks.add_check_suite(
        REPO, SHA, "failure", [lint, Check("tests", "success")], head_branch="feature/x", pull_numbers=(7,))

    def read(github: Github) -> dict[str, Any]:
        repo = github.get_repo(REPO)
        suite = repo.get_check_suite(suite_id)
        runs = list(suite.get_check_runs())
        run = repo.get_check_run(lint_id)
        annotations = list(run.get_annotations())
        return {
            "suite": (suite.conclusion, suite.head_sha, suite.head_branch, suite.app.slug,
                      [pull.number for pull in suite.pull_requests]),
            "runs": [(check.id, check.name, check.status, check.conclusion) for check in runs],
            "output": (run.output.title, run.output.summary, run.output.text, run.output.annotations_count,
                       run.html_url, run.details_url, run.head_sha),
            "annotations": [(note.path, note.start_line, note.end_line, note.annotation_level, note.title, note.message)
                            for note in annotations],
            "commit": sorted((check.name, check.conclusion) for check in repo.get_commit(SHA).get_check_runs()),
            "commit_suites": [found.id for found in repo.get_commit(SHA).get_check_suites()],
        }

    seen = await through_pygithub(fake, read)
    assert seen["suite"] == ("failure", SHA, "feature/x", "github-actions", [7])
    assert seen["runs"] == [(lint_id, "lint", "completed", "failure"), (tests_id, "tests", "completed", "success")]
    page = f"https://github.com/{REPO}/runs/{lint_id}"
    assert seen["output"] == ("2 problems", "ruff found 2 problems", "F401, E501", 2, page, page, SHA)
    assert seen["annotations"] == [("app/main.py", 3, 3, "failure", "F401", "`os` imported but unused"),
                                   ("app/main.py", 10, 12, "warning", None, "Line too long")]
    # The commit's list holds set_checks' run and the suite's.
    assert seen["commit"] == [("check 0", "success"), ("lint", "failure"), ("tests", "success")]
    assert seen["commit_suites"] == [suite_id]
    assert fake.checks.calls("annotations") == 1

    def missing(github: Github) -> int:
        try:
            github.get_repo("someone/else").get_check_suite(suite_id).conclusion  # noqa: B018  (completes it)
        except GithubException as error:
            return error.status
        return 200

    assert await through_pygithub(fake, missing) == 404


async def test_pygithub_reads_a_workflow_run_its_jobs_and_follows_the_log_redirect(fake: FakeGitHub) -> None:
    jobs = [Job("build", "success", [Step("Set up job"), Step("npm ci", output="added 120 packages")]),
            Job("test", "failure", [Step("Set up job"), Step("npm test", "failure", output="1 failing\n  expected 2")],
                annotations=[Annotation(".github", 1, "Process completed with exit code 1.")])]
    run_id, suite_id, (build_id, test_id) = fake.checks.add_workflow_run(REPO, SHA, "feature/x", "failure", jobs)

    def read(github: Github) -> dict[str, Any]:
        repo = github.get_repo(REPO)
        run = repo.get_workflow_run(run_id)
        found = list(run.jobs())
        job = repo.get_workflow_job(test_id)
        check = repo.get_check_run(int(job.check_run_url.rsplit("/", 1)[1]))
        return {
            "run": (run.name, run.head_sha, run.head_branch, run.status, run.conclusion, run.event,
                    run.check_suite_id, run.html_url),
            "listed": [run.id for run in repo.get_workflow_runs(head_sha=SHA)],
            "jobs": [(item.id, item.name, item.conclusion, [(step.number, step.name, step.conclusion)
                                                            for step in item.steps]) for item in found],
            "check": (check.name, check.conclusion, check.html_url == job.html_url, check.output.annotations_count),
            "location": job.logs_url(),  # PyGithub answers the redirect's Location
        }

    seen = await through_pygithub(fake, read)
    assert seen["run"] == ("CI", SHA, "feature/x", "completed", "failure", "pull_request", suite_id,
                           f"https://github.com/{REPO}/actions/runs/{run_id}")
    assert seen["listed"] == [run_id]
    assert seen["jobs"] == [(build_id, "build", "success", [(1, "Set up job", "success"), (2, "npm ci", "success")]),
                            (test_id, "test", "failure", [(1, "Set up job", "success"), (2, "npm test", "failure")])]
    assert seen["check"] == ("test", "failure", True, 1)
    assert seen["location"].startswith(f"{fake.api_url}/_logs/{test_id}?sig=")

    # The log's URL needs no token (GitHub's is signed), and is plain text in GitHub's format.
    log = await asyncio.to_thread(requests.get, seen["location"], timeout=10)
    assert (log.status_code, log.headers["content-type"].split(";")[0]) == (200, "text/plain")
    lines = [line.split(" ", 1)[1] for line in log.text.splitlines()]
    assert lines[-6:] == ["##[group]Run npm test", "npm test", "##[endgroup]", "1 failing", "  expected 2",
                          "##[error]Process completed with exit code 1."]
    assert log.text.startswith("2024-01-01T00:00:00.0000000Z ##[group]Run Set up job\n")
    assert "authorization" not in fake.server.received("GET", r"/_logs/\d+")[0].headers
    forged = await asyncio.to_thread(requests.get, f"{fake.api_url}/_logs/{test_id}?sig=guess", timeout=10)
    assert forged.status_code == 403

    # requests follows the 302 itself (keeping the token here: the host is the same, unlike GitHub's).
    followed = await asyncio.to_thread(
        requests.get, f"{fake.api_url}/repos/{REPO}/actions/jobs/{test_id}/logs",
        headers={"Authorization": f"token {TOKEN}"}, timeout=10)
    assert followed.history[0].status_code == 302 and "##[error]" in followed.text
    anonymous = await asyncio.to_thread(requests.get, f"{fake.api_url}/repos/{REPO}/actions/jobs/{test_id}/logs",
                                        timeout=10)
    assert anonymous.status_code == 403
    assert fake.checks.calls("job_logs") == 3


async def test_pygithub_reads_a_review_its_comments_and_posts_a_reply(fake: FakeGitHub) -> None:
    fake.add_pull(REPO, 7, "feature/x", SHA)
    review_id, (first, second) = fake.checks.add_review(
        REPO, 7, "CHANGES_REQUESTED", "Please fix these", user="reviewer",
        comments=[("app/main.py", 12, None, "@@ -10,3 +10,3 @@\n-old\n+new", "Name this better"),
                  ("app/util.py", 40, 35, "@@ -30,11 +30,11 @@", "Split this function")])
    fake.checks.set_mergeable(REPO, 7, False, "dirty")

    def read_and_reply(github: Github) -> dict[str, Any]:
        pull = github.get_repo(REPO).get_pull(7)
        review = pull.get_review(review_id)
        inline = list(pull.get_single_review_comments(review_id))
        reply = pull.create_review_comment_reply(first, "Renamed it")
        return {
            "pull": (pull.mergeable, pull.mergeable_state),
            "review": (review.state, review.body, review.user.login, review.commit_id),
            "reviews": [(item.id, item.state) for item in pull.get_reviews()],
            "inline": [(comment.id, comment.path, comment.line, comment.start_line, comment.original_line,
                        comment.side, comment.diff_hunk, comment.body, comment.user.login,
                        comment.pull_request_review_id, comment.in_reply_to_id) for comment in inline],
            "reply": (reply.in_reply_to_id, reply.body, reply.path, reply.user.login),
            "all": [(comment.id, comment.in_reply_to_id) for comment in pull.get_review_comments()],
        }

    seen = await through_pygithub(fake, read_and_reply)
    assert seen["pull"] == (False, "dirty")
    assert seen["review"] == ("CHANGES_REQUESTED", "Please fix these", "reviewer", SHA)
    assert seen["inline"] == [
        (first, "app/main.py", 12, None, 12, "RIGHT", "@@ -10,3 +10,3 @@\n-old\n+new", "Name this better", "reviewer",
         review_id, None),
        (second, "app/util.py", 40, 35, 40, "RIGHT", "@@ -30,11 +30,11 @@", "Split this function", "reviewer",
         review_id, None)]
    assert seen["reply"] == (first, "Renamed it", "app/main.py", "isolator[bot]")
    reply_id = seen["all"][-1][0]
    assert seen["all"] == [(first, None), (second, None), (reply_id, first)]
    assert seen["reviews"][0] == (review_id, "CHANGES_REQUESTED") and seen["reviews"][1][1] == "COMMENTED"
    replies = [(reply.number, reply.in_reply_to, reply.body) for reply in fake.checks.replies]
    assert replies == [(7, first, "Renamed it")]
    assert fake.checks.replies_to(first) == fake.checks.replies and fake.checks.calls("reply") == 1


@pytest.mark.parametrize("token, status", [(None, 401), ("ghp_wrong", 401)])
async def test_a_reply_needs_the_token(fake: FakeGitHub, token: str | None, status: int) -> None:
    fake.add_pull(REPO, 7, "feature/x", SHA)
    _, (comment,) = fake.checks.add_review(REPO, 7, comments=[("a.py", 1, None, "@@ -1 +1 @@", "Why?")])

    def reply(github: Github) -> int:
        try:
            github.get_repo(REPO).get_pull(7).create_review_comment_reply(comment, "Because")
        except GithubException as error:
            return error.status
        return 201

    assert await through_pygithub(fake, reply, token=token) == status
    assert fake.checks.replies == []


async def test_injected_failures_answer_the_new_routes(fake: FakeGitHub) -> None:
    run_id, _, _ = fake.checks.add_workflow_run(REPO, SHA, "feature/x", None, [Job("build", None)])
    fake.fail("workflow_run", 502)

    def read(github: Github) -> tuple[int, str | None]:
        repo = github.get_repo(REPO)
        try:
            repo.get_workflow_run(run_id).status  # noqa: B018  (completes it)
        except GithubException as error:
            first = error.status
        return first, repo.get_workflow_run(run_id).status

    assert await through_pygithub(fake, read) == (502, "in_progress")
    assert fake.checks.calls("workflow_run") == 2


def test_the_webhook_payloads_carry_what_the_fake_serves() -> None:
    suite = check_suite_completed(REPO, 11, SHA, "feature/x", "failure", pull_numbers=(7,))
    assert suite["action"] == "completed" and suite["sender"]["type"] == "Bot"
    assert (suite["check_suite"]["id"], suite["check_suite"]["conclusion"], suite["check_suite"]["head_sha"]) == \
        (11, "failure", SHA)
    assert [pull["number"] for pull in suite["check_suite"]["pull_requests"]] == [7]
    assert suite["repository"]["full_name"] == REPO

    run = workflow_run_completed(REPO, 21, SHA, "feature/x", "failure", pull_numbers=(7,), check_suite_id=11,
                                 api_url="http://127.0.0.1:9")
    assert (run["workflow_run"]["check_suite_id"], run["workflow_run"]["conclusion"]) == (11, "failure")
    assert run["workflow_run"]["jobs_url"] == f"http://127.0.0.1:9/repos/{REPO}/actions/runs/21/jobs"
    assert run["workflow_run"]["pull_requests"][0]["head"] == {
        "ref": "feature/x", "sha": SHA, "repo": {"id": 1296269, "url": f"http://127.0.0.1:9/repos/{REPO}",
                                                  "name": "hello-world"}}

    review = pull_request_review_submitted(REPO, 7, 31, "changes_requested", "Please fix", "reviewer", SHA, "feature/x")
    assert (review["review"]["state"], review["review"]["user"]["login"], review["pull_request"]["number"],
            review["pull_request"]["head"]["ref"]) == ("changes_requested", "reviewer", 7, "feature/x")

    comment = pull_request_review_comment_created(REPO, 7, 41, 31, "app/main.py", 12, "Name this better", "reviewer",
                                                  SHA, "feature/x", start_line=10)
    inline = comment["comment"]
    assert (inline["line"], inline["start_line"], inline["side"]) == (12, 10, "RIGHT")
    assert "in_reply_to_id" not in comment["comment"]
    reply = pull_request_review_comment_created(REPO, 7, 42, 32, "app/main.py", 12, "Done", "someone", SHA, "feature/x",
                                                in_reply_to_id=41)
    assert reply["comment"]["in_reply_to_id"] == 41 and reply["comment"]["start_side"] is None
