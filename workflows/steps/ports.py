"""Stub of activities/ports.py: a block of ports, taken on the codebase's host (where it is bound)."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

from isolator.contracts.environment import EnvironmentRef, PortBlock, PortRequest
from workflows.steps.options import RETRY_POLICY, host_queue


async def allocate_ports(environment: EnvironmentRef, count: int) -> PortBlock:
    return await workflow.execute_activity(
        "allocate_ports", PortRequest(environment.environment_id, count), result_type=PortBlock,
        task_queue=host_queue(environment.codebase.host), start_to_close_timeout=timedelta(minutes=1),
        retry_policy=RETRY_POLICY,
    )
