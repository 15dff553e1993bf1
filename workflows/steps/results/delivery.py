"""Stubs of activities/results/delivery.py: a run's work committed, pushed and proposed; `/pr`; a PR's state."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

from isolator.contracts.errors import USER_ERRORS
from isolator.contracts.results import (
    Delivery,
    PublishRequest,
    PullRequestAsk,
    PullRequestStatus,
    PullRequestStatusRequest,
    PushReport,
    PushRequest,
)
from workflows.steps.options import HEARTBEAT_TIMEOUT, RETRY_POLICY, host_queue

# A step that keeps failing gives up: the environment's next run must not wait behind it.
_BOUNDED = RetryPolicy(initial_interval=timedelta(seconds=1), maximum_interval=timedelta(seconds=30),
                       maximum_attempts=8, non_retryable_error_types=USER_ERRORS)


async def push_results(request: PushRequest) -> PushReport:
    """On the codebase's host: the agent's changes committed, the branch pushed (a slow origin included)."""
    return await workflow.execute_activity(
        "push_results", request, result_type=PushReport, task_queue=host_queue(request.environment.codebase.host),
        start_to_close_timeout=timedelta(minutes=10), heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=_BOUNDED,
    )


async def publish_results(request: PublishRequest) -> Delivery:
    return await workflow.execute_activity(
        "publish_results", request, result_type=Delivery, start_to_close_timeout=timedelta(minutes=2),
        heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=_BOUNDED,
    )


async def ask_pull_request(ask: PullRequestAsk) -> Delivery:
    """`/pr`: the environment's workflow pushes and opens the PR between its runs; what it did."""
    return await workflow.execute_activity(
        "ask_pull_request", ask, result_type=Delivery, start_to_close_timeout=timedelta(hours=2),
        heartbeat_timeout=timedelta(seconds=30), retry_policy=RETRY_POLICY,
    )


async def pull_request_status(request: PullRequestStatusRequest) -> PullRequestStatus:
    return await workflow.execute_activity(
        "pull_request_status", request, result_type=PullRequestStatus,
        start_to_close_timeout=timedelta(seconds=30), heartbeat_timeout=HEARTBEAT_TIMEOUT,
        retry_policy=RetryPolicy(maximum_attempts=2),
    )
