"""Stub of activities/chat/platforms: what the platform's API knows beyond the webhook."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

from isolator.contracts.message import CompleteHintsInput, IsolationHints
from workflows.steps.options import HEARTBEAT_TIMEOUT, RETRY_POLICY


async def complete_hints(request: CompleteHintsInput) -> IsolationHints:
    """Ask the platform's API what the webhook did not carry; platform outages are waited out."""
    return await workflow.execute_activity(
        "complete_hints", request, result_type=IsolationHints, start_to_close_timeout=timedelta(seconds=30),
        schedule_to_close_timeout=timedelta(minutes=30), heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=RETRY_POLICY,
    )
