"""Stubs of activities/environments/signals.py: telling environment workflows (start and attach,
signals, destroy and wait for the report)."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

from isolator.contracts.environment import (
    AttachRequest,
    DestroyEnvironmentInput,
    EnvironmentRef,
    SignalRequest,
)
from isolator.contracts.worktree import RemovalReport, RestoredWorktree
from workflows.steps.options import HEARTBEAT_TIMEOUT, LOCAL_OPTIONS, RETRY_POLICY


async def attach_environment(request: AttachRequest) -> None:
    await workflow.execute_local_activity("attach_environment", request, **LOCAL_OPTIONS)


async def signal_environment(request: SignalRequest) -> None:
    await workflow.execute_local_activity("signal_environment", request, **LOCAL_OPTIONS)


async def destroy_environment(request: DestroyEnvironmentInput) -> RemovalReport:
    """Ask the environment's workflow to remove it, and wait for what it did."""
    return await workflow.execute_activity(
        "destroy_environment", request, result_type=RemovalReport,
        start_to_close_timeout=timedelta(minutes=10), heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=RETRY_POLICY,
    )


async def set_up_again(environment: EnvironmentRef) -> str:
    """Have the environment's workflow run its set-up again; its set-up state afterwards."""
    return await workflow.execute_activity(
        "set_up_again", environment, result_type=str, start_to_close_timeout=timedelta(hours=2),
        heartbeat_timeout=timedelta(seconds=30), retry_policy=RETRY_POLICY,
    )


async def wait_for_setup(environment_id: str) -> str:
    """A message that arrives during set-up waits for it: answered when it is no longer running."""
    return await workflow.execute_activity(
        "wait_for_setup", environment_id, result_type=str, start_to_close_timeout=timedelta(hours=25),
        heartbeat_timeout=timedelta(seconds=30), retry_policy=RETRY_POLICY,
    )


async def wake_environment(environment: EnvironmentRef) -> RestoredWorktree:
    """A hibernated environment's workflow restores its worktree; raises RestoreRefused with the reason."""
    return await workflow.execute_activity(
        "wake_environment", environment, result_type=RestoredWorktree, start_to_close_timeout=timedelta(minutes=10),
        heartbeat_timeout=timedelta(seconds=30), retry_policy=RETRY_POLICY,
    )
