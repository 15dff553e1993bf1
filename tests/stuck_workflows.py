"""What the open workflows of a test's task queue are waiting on: said by a test that gave up waiting,
so that a hang fails in minutes with its cause, not at pytest-timeout's limit with the event loop's stack.
And their end, after a failed test: a step left waiting on one of them would hold the workers' stop."""

from __future__ import annotations

import contextlib
from typing import AsyncIterator

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowExecution
from temporalio.service import RPCError

LAST_EVENTS = 12


async def open_workflows_report(client: Client, task_queue: str) -> str:
    lines: list[str] = []
    async for execution in _running_on(client, task_queue):
        handle = client.get_workflow_handle(execution.id, run_id=execution.run_id)
        description = await handle.describe()
        lines.append(f"{execution.workflow_type} {execution.id}:")
        for pending in description.raw_description.pending_activities:
            failure = pending.last_failure.message if pending.HasField("last_failure") else ""
            lines.append(f"  pending {pending.activity_type.name}, attempt {pending.attempt} {failure}".rstrip())
        events = [event async for event in handle.fetch_history_events()]
        for event in events[-LAST_EVENTS:]:
            lines.append(f"  {event.event_id} {EventType.Name(event.event_type)}{_failure_of(event)}")
    return "\n".join(lines) or f"no open workflow on {task_queue}"


def _running_on(client: Client, task_queue: str) -> AsyncIterator[WorkflowExecution]:
    return client.list_workflows(f"ExecutionStatus = 'Running' AND TaskQueue = '{task_queue}'")


def _failure_of(event: object) -> str:
    for field in ("workflow_task_failed_event_attributes", "activity_task_failed_event_attributes"):
        if event.HasField(field):  # type: ignore[attr-defined]
            return f": {getattr(event, field).failure.message}"
    return ""


async def terminate_open_workflows(client: Client, task_queue: str) -> None:
    async for execution in _running_on(client, task_queue):
        with contextlib.suppress(RPCError):  # it ended meanwhile
            await client.get_workflow_handle(execution.id, run_id=execution.run_id).terminate("the test failed")
