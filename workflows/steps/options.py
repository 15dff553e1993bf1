"""How the steps run: retries, timeouts, and the task queue of a codebase's host."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

from isolator.contracts.errors import USER_ERRORS

RETRY_POLICY = RetryPolicy(
    initial_interval=timedelta(milliseconds=200),
    maximum_interval=timedelta(seconds=10),
    non_retryable_error_types=USER_ERRORS,
)
# Workers heartbeat every activity while it runs (workers/interceptors.py): a dead worker's
# activity is retried elsewhere after this, whatever its start-to-close timeout.
HEARTBEAT_TIMEOUT = timedelta(seconds=10)
# Registration names a host; when no worker of that host takes the git work, the user hears so.
HOST_PICKUP_TIMEOUT = timedelta(seconds=30)
# Local activities retry through a database restart, within a bound.
LOCAL_OPTIONS = dict(
    start_to_close_timeout=timedelta(seconds=10),
    schedule_to_close_timeout=timedelta(minutes=10),
    retry_policy=RETRY_POLICY,
)


def host_queue(host: str) -> str:
    return f"{workflow.info().task_queue}@{host}"
