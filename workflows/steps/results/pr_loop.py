"""Stubs of activities/results/pr_loop.py: the pull-request loop's look-ups and counts (local activities:
the database only, on the workflow's worker) and its GitHub reads and writes."""

from __future__ import annotations

from datetime import timedelta
from temporalio import workflow
from temporalio.common import RetryPolicy

from isolator.contracts.errors import USER_ERRORS
from isolator.contracts.pr_loop import (
    AskLoop,
    CiFailure,
    CiRecord,
    CiState,
    FeedbackEvent,
    LoopDecision,
    PullRequestNote,
    PullRequestWork,
    ReviewFeedback,
    RunEnd,
    ThreadRepliesInput,
)
from workflows.steps.options import HEARTBEAT_TIMEOUT, LOCAL_OPTIONS, RETRY_POLICY

# GitHub's calls give up after a while (it said no, or is down for long): the loop ends, seen in the UI.
_GITHUB_TIMEOUT = timedelta(minutes=2)
_GITHUB_RETRIES = RetryPolicy(initial_interval=timedelta(seconds=1), maximum_interval=timedelta(seconds=30),
                              maximum_attempts=8, non_retryable_error_types=USER_ERRORS)


async def ask_pull_request_loop(ask: AskLoop) -> LoopDecision:
    """A command's loop, to its decision (a run queued, or why not)."""
    return await workflow.execute_activity("ask_pull_request_loop", ask, result_type=LoopDecision,
                                           start_to_close_timeout=timedelta(minutes=5),
                                           heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=RETRY_POLICY)


async def find_pull_request_work(event: FeedbackEvent) -> PullRequestWork | None:
    return await workflow.execute_local_activity("find_pull_request_work", event,
                                                 result_type=PullRequestWork | None, **LOCAL_OPTIONS)


async def count_fix_attempt(record: CiRecord) -> int:
    return await workflow.execute_local_activity("count_fix_attempt", record, result_type=int, **LOCAL_OPTIONS)


async def record_ci(record: CiRecord) -> int:
    return await workflow.execute_local_activity("record_ci", record, result_type=int, **LOCAL_OPTIONS)


async def stop_fixing(record: CiRecord) -> bool:
    return await workflow.execute_local_activity("stop_fixing", record, result_type=bool, **LOCAL_OPTIONS)


async def open_pull_requests_on(event: FeedbackEvent) -> list[int]:
    return await workflow.execute_local_activity("open_pull_requests_on", event, result_type=list[int],
                                                 **LOCAL_OPTIONS)


async def run_end(run_id: str) -> RunEnd | None:
    return await workflow.execute_local_activity("run_end", run_id, result_type=RunEnd | None, **LOCAL_OPTIONS)


async def read_review_feedback(event: FeedbackEvent) -> ReviewFeedback:
    return await workflow.execute_activity(
        "read_review_feedback", event, result_type=ReviewFeedback, start_to_close_timeout=_GITHUB_TIMEOUT,
        heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=_GITHUB_RETRIES)


async def read_ci_failure(event: FeedbackEvent) -> CiFailure:
    return await workflow.execute_activity(
        "read_ci_failure", event, result_type=CiFailure, start_to_close_timeout=_GITHUB_TIMEOUT,
        heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=_GITHUB_RETRIES)


async def read_ci_state(event: FeedbackEvent) -> CiState:
    return await workflow.execute_activity(
        "read_ci_state", event, result_type=str, start_to_close_timeout=_GITHUB_TIMEOUT,
        heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=_GITHUB_RETRIES)


async def read_mergeable(event: FeedbackEvent) -> bool | None:
    return await workflow.execute_activity(
        "read_mergeable", event, result_type=bool | None, start_to_close_timeout=_GITHUB_TIMEOUT,
        heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=_GITHUB_RETRIES)


async def mark_ready_when_green(work: PullRequestWork) -> bool:
    return await workflow.execute_activity(
        "mark_ready_when_green", work, result_type=bool, start_to_close_timeout=_GITHUB_TIMEOUT,
        heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=_GITHUB_RETRIES)


async def reply_in_threads(request: ThreadRepliesInput) -> int:
    return await workflow.execute_activity(
        "reply_in_threads", request, result_type=int, start_to_close_timeout=_GITHUB_TIMEOUT,
        heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=_GITHUB_RETRIES)


async def note_on_pull_request(note: PullRequestNote) -> None:
    await workflow.execute_activity(
        "note_on_pull_request", note, start_to_close_timeout=_GITHUB_TIMEOUT,
        heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=_GITHUB_RETRIES)
