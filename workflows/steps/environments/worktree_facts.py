"""Stub of activities/environments/worktree_facts.py: what `/worktree why` reads on the codebase's host."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

from isolator.contracts.worktree import ExplainRequest, WorktreeFacts
from workflows.steps.options import HEARTBEAT_TIMEOUT, RETRY_POLICY, host_queue


async def explain_worktree(request: ExplainRequest) -> WorktreeFacts:
    return await workflow.execute_activity(
        "explain_worktree", request, result_type=WorktreeFacts, task_queue=host_queue(request.codebase.host),
        start_to_close_timeout=timedelta(minutes=1), heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=RETRY_POLICY,
    )
