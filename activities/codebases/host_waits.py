"""Whether a codebase's host answers, for a message that would wait on it (workflows/host_wait.py).

`host_answers` runs on the host's own queue and does nothing: the workflow asks it with a short
schedule-to-start timeout, so a host with no worker is known within seconds, and the step does not stay
on the queue. `host_seen` runs on the shared queue (a local activity) and says when the host's worker
last asked Temporal for work: the pollers of its queue, which Temporal keeps for a few minutes after
their last poll. A worker that starts polls at once, so a poll newer than the moment the host went
silent means it is back.
"""

from __future__ import annotations

from datetime import timezone

from temporalio import activity
from temporalio.api.enums.v1 import TaskQueueKind, TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client

from isolator.contracts.host_wait import HostSeen


class HostAnswerActivities:
    """On each host's queue."""

    def __init__(self, host: str) -> None:
        self.host = host

    @activity.defn
    async def host_answers(self) -> str:
        return self.host


class HostSeenActivities:
    """On the shared queue."""

    def __init__(self, client: Client, wait_hours: float) -> None:
        self.client = client
        self.wait_hours = wait_hours

    @activity.defn
    async def host_seen(self, host_queue: str) -> HostSeen:
        response = await self.client.workflow_service.describe_task_queue(DescribeTaskQueueRequest(
            namespace=self.client.namespace,
            task_queue=TaskQueue(name=host_queue, kind=TaskQueueKind.TASK_QUEUE_KIND_NORMAL),
            task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
        ))
        polls = [poller.last_access_time.ToDatetime(tzinfo=timezone.utc) for poller in response.pollers
                 if poller.HasField("last_access_time")]
        host = host_queue.rsplit("@", 1)[-1]
        if not polls:
            return HostSeen(host, None, None, self.wait_hours)
        last = max(polls)
        return HostSeen(host, last.timestamp(), last.strftime("%H:%M UTC"), self.wait_hours)
