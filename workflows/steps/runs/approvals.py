"""Stubs of activities/runs/approvals.py: an answered request closed, and the run that goes on with it."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

from isolator.contracts.approvals import CloseApprovalInput
from isolator.contracts.environment import AgentRunInput
from workflows.steps.options import HEARTBEAT_TIMEOUT, RETRY_POLICY


async def close_approval(closing: CloseApprovalInput) -> None:
    await workflow.execute_activity(
        "close_approval", closing, start_to_close_timeout=timedelta(seconds=30),
        schedule_to_close_timeout=timedelta(hours=6), heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=RETRY_POLICY,
    )


async def queue_continuation(request: AgentRunInput) -> None:
    await workflow.execute_activity(
        "queue_continuation", request, start_to_close_timeout=timedelta(seconds=30),
        schedule_to_close_timeout=timedelta(hours=6), heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=RETRY_POLICY,
    )
