"""Whether a host has a worker: asked of Temporal before a registration waits for that host's git work.

A host's worker polls its queue (`{queue}@{host}`, named by the workflow that sends the work there), and
Temporal lists the pollers it has seen lately.
A host that none polls is refused within seconds, not after the pickup timeout of the work's activity (30 s),
which still holds for a worker that died a moment ago (Temporal lists it for a while yet).
"""

from __future__ import annotations

import asyncio
import time

from temporalio import activity
from temporalio.api.enums.v1 import TaskQueueKind, TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client

# A worker started together with the one asking has not always polled yet: it is given this long.
STARTING_WORKER_SECONDS = 2.0
_LOOK_AGAIN_SECONDS = 0.1


class HostWorkerActivities:
    def __init__(self, client: Client) -> None:
        self.client = client

    @activity.defn
    async def host_has_worker(self, host_queue: str) -> bool:
        deadline = time.monotonic() + STARTING_WORKER_SECONDS
        while not await self._polled(host_queue):
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(_LOOK_AGAIN_SECONDS)
        return True

    async def _polled(self, host_queue: str) -> bool:
        response = await self.client.workflow_service.describe_task_queue(DescribeTaskQueueRequest(
            namespace=self.client.namespace,
            task_queue=TaskQueue(name=host_queue, kind=TaskQueueKind.TASK_QUEUE_KIND_NORMAL),
            task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
        ))
        return len(response.pollers) > 0
