"""Stub of activities/results/branch_updates.py: others' commits on a PR's branch taken in before a run."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

from isolator.contracts.branch_updates import BranchUpdate, BranchUpdateRequest
from isolator.contracts.errors import USER_ERRORS
from workflows.steps.options import HEARTBEAT_TIMEOUT, host_queue

# The run waits for this step: a few quick attempts, then it goes on without (its note says so).
_FEW = RetryPolicy(initial_interval=timedelta(seconds=1), maximum_interval=timedelta(seconds=5),
                   maximum_attempts=3, non_retryable_error_types=USER_ERRORS)


async def take_in_branch_updates(request: BranchUpdateRequest) -> BranchUpdate:
    """On the codebase's host: origin's branch (and on request the PR's base) merged into the worktree."""
    return await workflow.execute_activity(
        "take_in_branch_updates", request, result_type=BranchUpdate,
        task_queue=host_queue(request.environment.codebase.host), start_to_close_timeout=timedelta(minutes=3),
        schedule_to_close_timeout=timedelta(minutes=10), heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=_FEW,
    )
