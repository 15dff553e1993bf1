"""The last scheduled (or dashboard-started) cleanup's report, read back from its workflow in Temporal."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from temporalio.client import Client
from temporalio.service import RPCError

from isolator.contracts.cleanup import CleanupRunReport

log = logging.getLogger(__name__)

_LAST = "WorkflowType = 'CleanupWorkflow' AND ExecutionStatus = 'Completed' AND TaskQueue = '{queue}'"


@dataclass
class LastCleanup:
    workflow_id: str
    finished_at: datetime | None
    report: CleanupRunReport


async def last_cleanup(client: Client, task_queue: str) -> LastCleanup | None:
    """The newest finished cleanup of this service (its task queue); None when none has finished (or
    Temporal's visibility is away)."""
    try:
        async for execution in client.list_workflows(_LAST.format(queue=task_queue.replace("'", "")), limit=1):
            handle = client.get_workflow_handle(execution.id, run_id=execution.run_id, result_type=CleanupRunReport)
            report = await handle.result()
            return LastCleanup(execution.id, execution.close_time, report)
    except RPCError as error:
        log.warning("the last cleanup's report was not read: %s", error)
    return None
