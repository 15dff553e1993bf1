"""The baseline of the reuse path: a bare workflow with as many activities, all doing nothing.

The reuse path runs two local activities (record the conversation, validate its worktree), so
the bare workflow runs two no-op local activities. `python -m bench.baseline` serves it on
BENCH_QUEUE, in a process of its own as the isolator worker is.
"""

from __future__ import annotations

import asyncio
import os
import signal
from datetime import timedelta

from temporalio import activity, workflow
from temporalio.client import Client
from temporalio.worker import Worker

REUSE_PATH_ACTIVITIES = 2


@activity.defn
async def do_nothing() -> None:
    return None


@workflow.defn
class BareWorkflow:
    @workflow.run
    async def run(self, activities: int) -> int:
        for _ in range(activities):
            await workflow.execute_local_activity(do_nothing, start_to_close_timeout=timedelta(seconds=10))
        return activities


async def serve(address: str, queue: str) -> None:
    client = await Client.connect(address)
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(signum, stop.set)
    worker = Worker(client, task_queue=queue, workflows=[BareWorkflow], activities=[do_nothing],
                    max_concurrent_local_activities=100)
    async with worker:
        await stop.wait()


if __name__ == "__main__":
    asyncio.run(serve(os.environ["TEMPORAL_ADDRESS"], os.environ["BENCH_QUEUE"]))
