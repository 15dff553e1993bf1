"""Stubs of activities/codebases/registration.py: codebase rows (local), inspecting and cloning (the host's queue)."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

from isolator.contracts.codebase import (
    Codebase,
    RegisteredCodebase,
    RepositoryInfo,
    RepositorySource,
)
from workflows.steps.options import (
    HEARTBEAT_TIMEOUT,
    HOST_PICKUP_TIMEOUT,
    LOCAL_OPTIONS,
    RETRY_POLICY,
    host_queue,
)


async def find_codebase(source: RepositorySource) -> Codebase | None:
    return await workflow.execute_local_activity("find_codebase", source, result_type=Codebase | None, **LOCAL_OPTIONS)


async def record_codebase(info: RepositoryInfo) -> RegisteredCodebase:
    return await workflow.execute_local_activity("record_codebase", info, result_type=RegisteredCodebase, **LOCAL_OPTIONS)


async def list_codebases() -> list[Codebase]:
    return await workflow.execute_local_activity("list_codebases", result_type=list[Codebase], **LOCAL_OPTIONS)


async def host_has_worker(host: str) -> bool:
    """Whether a worker polls the queue its git work goes to; one that is starting is given a moment
    (activities/codebases/host_workers.py)."""
    return await workflow.execute_local_activity("host_has_worker", host_queue(host), result_type=bool,
                                                 **LOCAL_OPTIONS)


async def inspect_repository(source: RepositorySource) -> RepositoryInfo:
    return await workflow.execute_activity(
        "inspect_repository", source, result_type=RepositoryInfo, task_queue=host_queue(source.host),
        start_to_close_timeout=timedelta(minutes=1), schedule_to_start_timeout=HOST_PICKUP_TIMEOUT,
        heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=RETRY_POLICY,
    )


async def clone_repository(source: RepositorySource) -> RepositoryInfo:
    return await workflow.execute_activity(
        "clone_repository", source, result_type=RepositoryInfo, task_queue=host_queue(source.host),
        start_to_close_timeout=timedelta(hours=2), heartbeat_timeout=timedelta(seconds=30),
        schedule_to_start_timeout=HOST_PICKUP_TIMEOUT, retry_policy=RETRY_POLICY,
    )
