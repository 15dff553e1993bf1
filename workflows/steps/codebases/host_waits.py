"""Stubs of activities/codebases/host_waits.py: does a codebase's host answer, and when was it last seen."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, TimeoutError

from isolator.contracts.host_wait import HostSeen
from workflows.steps.options import HEARTBEAT_TIMEOUT, LOCAL_OPTIONS, host_queue

# A host whose worker takes no step within this is silent: the user hears it within 5 s of the message.
HOST_ANSWER_TIMEOUT = timedelta(seconds=3)


async def host_answers(host: str) -> bool:
    """True when a worker of `host` takes a step now; the step never stays on the host's queue."""
    try:
        await workflow.execute_activity(
            "host_answers", task_queue=host_queue(host), result_type=str,
            schedule_to_start_timeout=HOST_ANSWER_TIMEOUT, start_to_close_timeout=timedelta(seconds=10),
            heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=RetryPolicy(maximum_attempts=1),
        )
    except ActivityError as error:
        if isinstance(error.cause, TimeoutError):
            return False
        raise
    return True


async def host_seen(host: str) -> HostSeen:
    return await workflow.execute_local_activity("host_seen", host, result_type=HostSeen, **LOCAL_OPTIONS)
