"""Starting the pull-request loop's workflow (workflows/pr_loop.py) for a GitHub event or a chat command:
once per key, whatever the redeliveries."""

from __future__ import annotations

import logging

import asyncpg
from temporalio.client import Client
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError

from api.webhooks.github_feedback import workflow_key
from isolator.contracts.pr_loop import FeedbackEvent, PullRequestLoopInput
from isolator.settings import Settings
from workflows.pr_loop import PullRequestLoopWorkflow

log = logging.getLogger(__name__)


async def start_loop(settings: Settings, client: Client, event: FeedbackEvent) -> str:
    """The loop's workflow id; a second event with the same key joins the first (or is dropped once it ended)."""
    workflow_id = workflow_key(event)
    try:
        await client.start_workflow(
            PullRequestLoopWorkflow.run,
            PullRequestLoopInput(event, autofix=settings.autofix == "on", max_attempts=settings.autofix_max_attempts),
            id=workflow_id, task_queue=settings.task_queue,
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            static_summary=f"{event.kind.replace('_', ' ')} of {event.repository}"
                           + (f"#{event.number}" if event.number else "")
                           + (f" at {event.head_sha[:7]}" if event.head_sha else ""),
        )
    except WorkflowAlreadyStartedError:
        log.info("%s: already handled", workflow_id)
    return workflow_id


async def is_ours(pool: asyncpg.Pool, repository: str, number: int) -> bool:
    """The PR is one the service works on: its branch's PR, or a PR conversation with a worktree."""
    return bool(await pool.fetchval(
        """SELECT EXISTS (SELECT 1 FROM pull_requests WHERE lower(repository) = lower($1) AND number = $2
                                                     AND state = 'open')
               OR EXISTS (SELECT 1 FROM conversations WHERE platform = 'github' AND environment_id IS NOT NULL
                          AND lower(platform_conversation_id) = lower($1 || '#' || $2::int) AND closed_at IS NULL)""",
        repository, number))
