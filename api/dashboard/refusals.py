"""Environments whose removal was refused, read from their workflows. The service's own refused removal
(a close, a cleanup; git could not read the worktree, say) is kept by the environment's workflow, not by
PostgreSQL: its row stays `active`, while the workflow sets IsolatorStatus to `removal_refused`, keeps the
refusal's message in its state, and tries again every hour. It stops being refused when a removal goes
through (forced, or the worktree repaired) or a message in one of its conversations cancels it. A
person's refused removal ends at once: it is never a state."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowQueryFailedError, WorkflowQueryRejectedError
from temporalio.converter import decode_search_attributes
from temporalio.service import RPCError

from isolator.contracts import search_attributes
from isolator.contracts.environment import EnvironmentState, environment_workflow_id

log = logging.getLogger(__name__)

REFUSED = "removal_refused"
_LISTED = ("WorkflowType = 'EnvironmentWorkflow' AND ExecutionStatus = 'Running' "
           f"AND IsolatorStatus = '{REFUSED}' AND TaskQueue = '{{queue}}'")
LISTED_AT_MOST = 2000  # refusals wait for a person: far fewer than this pile up
ASK_SECONDS = 5  # a page waits this long at most for a workflow's state or history
# The refusal's message is chat's (activities/providers/worktree/removal.py); the dashboard says its gist.
_GISTS = (("has uncommitted changes", "uncommitted changes"), ("git cannot read", "git cannot read it"),
          ("is the main checkout", "it is the main checkout"), ("is not a worktree", "it is not a worktree"))


@dataclass
class Refusal:
    reason: str  # its gist: "uncommitted changes"
    since: datetime | None  # the first refusal of this run of refusals; None when the workflow's history did not say


async def refused_environments(client: Client, task_queue: str) -> dict[str, str]:
    """Environment id -> codebase name of every environment whose removal is refused now (one query of
    Temporal's visibility); empty when Temporal could not be asked."""
    refused: dict[str, str] = {}
    try:
        async for execution in client.list_workflows(_LISTED.format(queue=task_queue.replace("'", "")),
                                                      limit=LISTED_AT_MOST):
            codebase = execution.typed_search_attributes.get(search_attributes.CODEBASE)
            refused[execution.id.removeprefix("environment:")] = codebase or ""
    except RPCError as error:
        log.warning("the refused removals were not read: %s", error)
    return refused


def refused_counts(refused: dict[str, str]) -> dict[str, int]:
    """How many environments' removal is refused, per codebase name."""
    return dict(Counter(refused.values()))


async def refusals(client: Client, environment_ids: list[str]) -> dict[str, Refusal]:
    """Each refused environment's reason and since when, asked of its workflow (at once, each bounded)."""
    found = await asyncio.gather(*(refusal(client, environment_id) for environment_id in environment_ids))
    return {environment_id: found_one for environment_id, found_one in zip(environment_ids, found)
            if found_one is not None}


async def refusal(client: Client, environment_id: str) -> Refusal | None:
    """Why and since when the environment's removal is refused; None when it is not (or no longer)."""
    handle = client.get_workflow_handle(environment_workflow_id(environment_id))
    try:
        state = await handle.query("state", result_type=EnvironmentState,
                                   rpc_timeout=timedelta(seconds=ASK_SECONDS))
    except (RPCError, WorkflowQueryFailedError, WorkflowQueryRejectedError) as error:
        log.info("environment %s's refusal was not read: %s", environment_id, error)
        return None
    if state.status not in (REFUSED, "removing") or not state.refusal:
        return None
    return Refusal(refusal_gist(state.refusal), await _refused_since(client, environment_id))


def refusal_gist(message: str) -> str:
    """The refusal's reason in a few words, for a table cell."""
    return next((gist for found, gist in _GISTS if found in message), "see its page")


async def _refused_since(client: Client, environment_id: str) -> datetime | None:
    """When IsolatorStatus last became `removal_refused` (the hourly retries keep it so): read from the
    workflow's history, since nothing else records it."""
    since = None
    handle = client.get_workflow_handle(environment_workflow_id(environment_id))
    try:
        async with asyncio.timeout(ASK_SECONDS):
            async for event in handle.fetch_history_events():
                if event.event_type != EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
                    continue
                fields = decode_search_attributes(
                    event.upsert_workflow_search_attributes_event_attributes.search_attributes)
                status = fields.get(search_attributes.STATUS.name)
                if status:
                    refused = status[0] == REFUSED
                    since = (since or event.event_time.ToDatetime(tzinfo=timezone.utc)) if refused else None
    except (RPCError, TimeoutError) as error:
        log.info("environment %s's history was not read: %s", environment_id, error)
    return since
