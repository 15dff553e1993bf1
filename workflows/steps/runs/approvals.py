"""Stubs of activities/runs/approvals.py: an answered request closed, and the run that goes on with it:
local activities of the environment's worker, on the way from a press to the resumed session."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

from isolator.contracts.approvals import CloseApprovalInput
from isolator.contracts.environment import AgentRunInput
from workflows.steps.options import LOCAL_OPTIONS


async def close_approval(closing: CloseApprovalInput) -> None:
    """Locally: a database row and the request's message edited (a platform's API, retried)."""
    await workflow.execute_local_activity(
        "close_approval", closing, **{**LOCAL_OPTIONS, "start_to_close_timeout": timedelta(seconds=30)})


async def queue_continuation(request: AgentRunInput) -> None:
    await workflow.execute_local_activity("queue_continuation", request, **LOCAL_OPTIONS)
