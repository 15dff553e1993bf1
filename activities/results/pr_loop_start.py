"""Starting the pull-request loop's workflow (workflows/pr_loop.py), for a GitHub event (the API) or a
chat command (an activity): once per key, whatever the redeliveries."""

from __future__ import annotations

import logging

from temporalio.client import Client, WorkflowHandle
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError

from isolator.contracts.pr_loop import FeedbackEvent, LoopDecision, PullRequestLoopInput, workflow_key
from isolator.settings import Settings

log = logging.getLogger(__name__)


async def start_loop(settings: Settings, client: Client, event: FeedbackEvent) -> WorkflowHandle:
    """The loop's workflow; a second event with the same key joins the first (or finds it ended)."""
    workflow_id = workflow_key(event)
    try:
        return await client.start_workflow(
            "PullRequestLoopWorkflow",
            PullRequestLoopInput(event, autofix=settings.autofix == "on", max_attempts=settings.autofix_max_attempts,
                                 ready_when_green=settings.results_ready_when_green),
            id=workflow_id, task_queue=settings.task_queue, result_type=LoopDecision,
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            static_summary=f"{event.kind.replace('_', ' ')} of {event.repository}"
                           + (f"#{event.number}" if event.number else "")
                           + (f" at {event.head_sha[:7]}" if event.head_sha else ""),
            # As a message's: its first task comes back in the answer when this client's worker serves the queue.
            request_eager_start=settings.eager_start,
        )
    except WorkflowAlreadyStartedError as already:
        log.info("%s: already handled", workflow_id)
        return client.get_workflow_handle(workflow_id, run_id=already.run_id, result_type=LoopDecision)
