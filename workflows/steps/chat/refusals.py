"""Stub of activities/chat/refusals.py (a local activity)."""

from __future__ import annotations

from temporalio import workflow

from isolator.contracts.trust import RefusalReplyInput
from workflows.steps.options import LOCAL_OPTIONS


async def claim_refusal_reply(request: RefusalReplyInput) -> bool:
    return await workflow.execute_local_activity("claim_refusal_reply", request, result_type=bool, **LOCAL_OPTIONS)
