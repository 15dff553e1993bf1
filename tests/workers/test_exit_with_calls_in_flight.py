"""Why `isolator worker` once ended with SIGABRT on its stop, and what keeps every process from it.

A Temporal call that ends while the interpreter tears itself down (the SDK's Rust threads call into
Python to hand over its result) makes CPython abort the process ("PyGILState_Release: thread state
... must be current", "Python runtime state: finalizing", exit -6), or hang. The call here is a poll
the server ends after a second, which nothing awaits any more (as a shutdown can leave one); the
teardown is held long enough for it to end there, so the race that a loaded machine makes rare would
happen every time. Processes leave through workers/exiting.py, which has no teardown for it to meet."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from workers.temporal_server import TemporalDevServer

PROGRAM = textwrap.dedent("""
    import asyncio, sys, time
    from temporalio.api.taskqueue.v1 import TaskQueue
    from temporalio.api.workflowservice.v1 import PollActivityTaskQueueRequest
    from temporalio.bridge.client import RpcCall
    from isolator.payloads import connect
    from workers.exiting import leave

    class SlowTeardown:
        def __del__(self):
            time.sleep(3)  # in the interpreter's teardown, the GIL released

    held = SlowTeardown()

    async def main(address):
        global abandoned
        client = await connect(address)
        poll = PollActivityTaskQueueRequest(namespace="default", task_queue=TaskQueue(name="nobody-polls-this"))
        abandoned = client.service_client._bridge_client._ref.call_workflow_service(
            RpcCall("poll_activity_task_queue", poll.SerializeToString(), False, {}, 1000))

    asyncio.run(main(sys.argv[1]))
    leave(0)
""")


def test_a_process_that_leaves_as_isolator_does_exits_cleanly(temporal_server: TemporalDevServer) -> None:
    finished = subprocess.run([sys.executable, "-c", PROGRAM, temporal_server.address],
                              capture_output=True, text=True, timeout=120)
    assert finished.returncode == 0, finished.stderr
