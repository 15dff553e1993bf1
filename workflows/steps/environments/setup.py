"""Stubs of activities/environments/setup.py: the repository's set-up and teardown, on the codebase's host."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.workflow import ActivityCancellationType

from isolator.contracts.repository import RepositorySetup
from isolator.contracts.setup import CommandsReport, CommandsRequest, ReadSetupInput
from workflows.steps.options import HEARTBEAT_TIMEOUT, RETRY_POLICY, host_queue

# Beyond the commands' own time limit: submodules, progress messages, a slow host.
_MARGIN = timedelta(minutes=5)


async def read_repository_setup(request: ReadSetupInput) -> RepositorySetup:
    return await workflow.execute_activity(
        "read_repository_setup", request, result_type=RepositorySetup, task_queue=host_queue(request.codebase.host),
        start_to_close_timeout=timedelta(minutes=2), heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=RETRY_POLICY,
    )


async def run_commands(request: CommandsRequest) -> CommandsReport:
    """The user's commands are not idempotent: a run whose worker died is reported, not run again."""
    config = request.setup.config
    minutes = config.teardown_timeout_minutes if request.teardown else config.setup_timeout_minutes
    return await workflow.execute_activity(
        "run_commands", request, result_type=CommandsReport, task_queue=host_queue(request.environment.codebase.host),
        start_to_close_timeout=timedelta(minutes=minutes) + _MARGIN, heartbeat_timeout=HEARTBEAT_TIMEOUT,
        retry_policy=RetryPolicy(maximum_attempts=1),
        # A forced removal cancels it: the removal waits until the commands' process group is gone.
        cancellation_type=ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    )
