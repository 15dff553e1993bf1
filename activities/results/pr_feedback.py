"""What comes back on a pull request, through PyGithub: a review and its inline comments, what failed in
CI (check outputs, annotations, the failing lines of GitHub Actions logs), the head's CI state, and
replies in a review's threads once a run has answered (docs/pr-loop.md).

Plain functions the pull-request loop's activities call. Reads may repeat freely; replies carry the
run's marker and a thread that has one is skipped, so a retried activity posts each reply once.
"""

from __future__ import annotations

import logging
import re
import time
from functools import partial
from itertools import islice
from typing import Any

import requests
from github import Github, GithubException
from github.CheckRun import CheckRun
from github.PullRequestComment import PullRequestComment
from github.Repository import Repository

from activities.chat.platforms.github import _call
from isolator.contracts.pr_loop import CiFailure, CiState, FailedCheck, ReviewComment, ReviewFeedback, ThreadReply
from isolator.pr_feedback_texts import cut_log
from isolator.settings import Settings

log = logging.getLogger(__name__)

# A verdict on the code. `cancelled` is not one: a newer push (a workflow's `cancel-in-progress`) or a
# person stopped the run. `action_required` is: the check asks for something before it can pass.
FAILED = {"failure", "timed_out", "startup_failure", "action_required"}
PASSED = {"success", "neutral", "skipped"}
FAILED_STATUSES = {"failure", "error"}  # commit statuses' states
ACTIONS_APP = "github-actions"
# Bounds on what one read fetches and keeps: a matrix failing everywhere tells its story in its first checks.
MAX_CHECKS = 20
ANNOTATED_CHECKS = 10  # one request each
LOGGED_JOBS = 5  # three requests and a download each
MAX_ANNOTATIONS = 30
OUTPUT_LIMIT = 4_000  # characters of a check output's summary, and of its text
TITLE_LIMIT = 300
ANNOTATION_LIMIT = 500
# A job log is read as it streams, keeping its end (where a failure is) within this many bytes.
LOG_KEPT_BYTES = 5_000_000
LOG_READ_BYTES = 50_000_000  # beyond this the log is not the job's end any more: stop
LOG_SECONDS = 20  # the whole download, well inside the activity's time
_JOB_IN_URL = re.compile(r"/actions/runs/\d+/job/(\d+)")


async def read_review(settings: Settings, repository: str, number: int, review_id: int) -> ReviewFeedback:
    """A submitted review: its state, body and author, and every inline comment of it."""
    return await _call(settings, repository, partial(_review, repository, number, review_id),
                       f"reading review {review_id} of PR #{number} of {repository}")


async def read_review_comment(settings: Settings, repository: str, number: int, comment_id: int) -> ReviewFeedback:
    """An inline comment made alone (not as part of a submitted review), as feedback of one comment."""
    return await _call(settings, repository, partial(_single_comment, repository, number, comment_id),
                       f"reading review comment {comment_id} of PR #{number} of {repository}")


async def read_ci_failure(settings: Settings, repository: str, head_sha: str) -> CiFailure:
    """The failed check runs and commit statuses of a commit, each with what it says went wrong."""
    return await _call(settings, repository, partial(_ci_failure, repository, head_sha),
                       f"reading the checks of {head_sha[:7]} in {repository}")


async def ci_state(settings: Settings, repository: str, head_sha: str) -> CiState:
    """`pending` while a check runs (or none has started: a commit without checks has no verdict yet),
    `red` once all are done and one failed, `green` when every one passed."""
    return await _call(settings, repository, partial(_ci_state, repository, head_sha),
                       f"reading the checks of {head_sha[:7]} in {repository}")


async def reply_in_threads(settings: Settings, repository: str, number: int, replies: list[ThreadReply],
                           marker: str) -> int:
    """Post each reply in its comment's thread, unless the thread has a reply with `marker` (an HTML comment
    naming the run). Replies to the same thread go as one. Returns how many were posted now."""
    return await _call(settings, repository, partial(_reply, repository, number, replies, marker),
                       f"replying to review comments of PR #{number} of {repository}")


async def pull_request_mergeable(settings: Settings, repository: str, number: int) -> bool | None:
    """Whether the PR merges cleanly; None while GitHub has not computed it (it does so lazily, after a push)."""
    def read(github: Github) -> bool | None:
        return github.get_repo(repository).get_pull(number).mergeable
    return await _call(settings, repository, read, f"reading PR #{number} of {repository}")


async def pull_request_head(settings: Settings, repository: str, number: int) -> str:
    """The PR's head commit as GitHub says now."""
    def read(github: Github) -> str:
        return github.get_repo(repository).get_pull(number).head.sha
    return await _call(settings, repository, read, f"reading PR #{number} of {repository}")


async def mark_ready_for_review(settings: Settings, repository: str, number: int) -> bool:
    """The draft PR marked ready for review; False when it was not a draft (nothing to do)."""
    def mark(github: Github) -> bool:
        pull = github.get_repo(repository).get_pull(number)
        if not pull.draft:
            return False
        pull.mark_ready_for_review()
        return True
    return await _call(settings, repository, mark, f"marking PR #{number} of {repository} ready for review")


def _review(repository: str, number: int, review_id: int, github: Github) -> ReviewFeedback:
    pull = github.get_repo(repository).get_pull(number)
    review = pull.get_review(review_id)
    comments = [_comment(comment) for comment in pull.get_single_review_comments(review_id)]
    return ReviewFeedback(repository=repository, number=number, review_id=review_id,
                          state=(review.state or "").lower(), body=review.body or "",
                          author=_login(review.user), comments=comments)


def _single_comment(repository: str, number: int, comment_id: int, github: Github) -> ReviewFeedback:
    comment = _comment(github.get_repo(repository).get_pull(number).get_review_comment(comment_id))
    return ReviewFeedback(repository=repository, number=number, review_id=None, state="commented", body="",
                          author=comment.author, comments=[comment])


def _comment(comment: PullRequestComment) -> ReviewComment:
    return ReviewComment(id=comment.id, path=comment.path, line=comment.line, start_line=comment.start_line,
                         diff_hunk=comment.diff_hunk or "", body=comment.body or "", author=_login(comment.user))


def _login(user: Any) -> str:
    return user.login if user is not None else "ghost"  # GitHub's name for a deleted account


def _ci_failure(repository: str, head_sha: str, github: Github) -> CiFailure:
    repo = github.get_repo(repository)
    commit = repo.get_commit(head_sha)
    failed_runs = [run for run in commit.get_check_runs() if run.status == "completed" and run.conclusion in FAILED]
    checks: list[FailedCheck] = []
    logged = 0
    for index, run in enumerate(failed_runs[:MAX_CHECKS]):
        wants_log = run.app is not None and run.app.slug == ACTIONS_APP and logged < LOGGED_JOBS
        checks.append(_failed_check(repo, run, annotated=index < ANNOTATED_CHECKS, logged=wants_log))
        if wants_log:
            logged += 1
    for status in commit.get_combined_status().statuses:
        if status.state in FAILED_STATUSES and len(checks) < MAX_CHECKS:
            checks.append(FailedCheck(name=status.context, conclusion=status.state,
                                      summary=_cut(status.description or "", OUTPUT_LIMIT)))
    return CiFailure(repository=repository, head_sha=head_sha, checks=checks)


def _failed_check(repo: Repository, run: CheckRun, annotated: bool, logged: bool) -> FailedCheck:
    output = run.output
    check = FailedCheck(name=run.name, conclusion=run.conclusion)
    if output is not None:
        check.title = _cut(output.title or "", TITLE_LIMIT)
        check.summary = _cut(output.summary or "", OUTPUT_LIMIT)
        check.text = _cut(output.text or "", OUTPUT_LIMIT)
    if annotated and output is not None and output.annotations_count:
        # Notices (deprecations, caches) say nothing of what failed.
        notes = (note for note in run.get_annotations() if note.annotation_level in ("failure", "warning"))
        check.annotations = [_cut(f"{note.path}:{note.start_line}: {note.message}", ANNOTATION_LIMIT)
                             for note in islice(notes, MAX_ANNOTATIONS)]
    if logged:
        check.log_excerpt = _job_log_excerpt(repo, run)
    return check


def _job_log_excerpt(repo: Repository, run: CheckRun) -> str:
    """The failing lines of an Actions job's log; empty when the log cannot be had (expired, not allowed):
    the check's output and annotations still tell what failed."""
    # Actions gives a job the id of its check run; the run's details URL names the job, and is read first.
    found = _JOB_IN_URL.search(run.details_url or "")
    job_id = int(found.group(1)) if found else run.id
    try:
        job = repo.get_workflow_job(job_id)
        failing_steps = [step.name for step in job.steps if step.conclusion == "failure"]
        text = _download(job.logs_url())
    except (GithubException, requests.RequestException) as error:
        log.warning("the log of job %s of check %r could not be read: %s", job_id, run.name, error)
        return ""
    return cut_log(text, failing_steps)


def _download(url: str) -> str:
    """A job log from the signed URL GitHub redirects to. No Authorization header: the URL is its own
    credential, and the token must not reach the log storage's host."""
    deadline = time.monotonic() + LOG_SECONDS
    kept = bytearray()
    read = 0
    with requests.get(url, stream=True, timeout=10) as response:
        response.raise_for_status()
        for chunk in response.iter_content(chunk_size=256 * 1024):
            kept += chunk
            read += len(chunk)
            if len(kept) > LOG_KEPT_BYTES:
                del kept[:len(kept) - LOG_KEPT_BYTES]
            if read >= LOG_READ_BYTES or time.monotonic() > deadline:
                break
    text = kept.decode("utf-8", errors="replace")
    # A log cut at its start begins mid-line.
    return text.split("\n", 1)[-1] if read > len(kept) else text


def _ci_state(repository: str, head_sha: str, github: Github) -> CiState:
    commit = github.get_repo(repository).get_commit(head_sha)
    runs = list(commit.get_check_runs())
    # GitHub's combined state is `pending` for a commit without statuses: the statuses themselves are read.
    statuses = commit.get_combined_status().statuses
    if not runs and not statuses:
        return "pending"
    if any(run.status != "completed" for run in runs) or any(status.state == "pending" for status in statuses):
        return "pending"
    if any(run.conclusion in FAILED for run in runs) or any(status.state in FAILED_STATUSES for status in statuses):
        return "red"
    # Cancelled or stale checks gave no verdict; a re-run will.
    return "green" if all(run.conclusion in PASSED for run in runs) else "pending"


def _reply(repository: str, number: int, replies: list[ThreadReply], marker: str, github: Github) -> int:
    pull = github.get_repo(repository).get_pull(number)
    thread_of: dict[int, int] = {}
    answered: set[int] = set()
    for comment in pull.get_review_comments():
        # Read from the listed JSON: PyGithub fetches a comment anew on reading a field its list left out,
        # as `in_reply_to_id` of every comment that starts a thread.
        thread = comment._rawData.get("in_reply_to_id") or comment.id
        thread_of[comment.id] = thread
        if marker in (comment.body or ""):
            answered.add(thread)
    bodies: dict[int, list[str]] = {}
    for reply in replies:
        bodies.setdefault(thread_of.get(reply.comment_id, reply.comment_id), []).append(reply.body)
    posted = 0
    for thread, texts in bodies.items():
        if thread in answered:
            continue
        pull.create_review_comment_reply(thread, "\n\n".join(texts) + f"\n\n{marker}")
        posted += 1
    return posted


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"
