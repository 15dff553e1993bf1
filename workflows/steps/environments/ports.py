"""Stubs of activities/environments/ports.py: a block of ports, taken on the codebase's host (where it is bound)."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

from isolator.contracts.environment import EnvironmentRef, PortBlock, PortRequest
from workflows.steps.options import HEARTBEAT_TIMEOUT, LOCAL_OPTIONS, RETRY_POLICY, host_queue


async def allocate_ports(environment: EnvironmentRef, count: int, preferred: PortBlock | None = None) -> PortBlock:
    """Locally when the codebase is on this worker's host (a database call and a few binds), else on
    the host's queue. `preferred`: the claimed warm worktree's block, taken over when still free."""
    request = PortRequest(environment.environment_id, count, environment.codebase.host, preferred)
    here = await workflow.execute_local_activity(
        "allocate_ports_here", request, result_type=PortBlock | None, **LOCAL_OPTIONS
    )
    if here is not None:
        return here
    return await workflow.execute_activity(
        "allocate_ports", request, result_type=PortBlock, task_queue=host_queue(environment.codebase.host),
        start_to_close_timeout=timedelta(minutes=1), heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=RETRY_POLICY,
    )
