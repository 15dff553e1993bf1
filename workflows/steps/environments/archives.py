"""Stubs of activities/environments/archives.py: the rows of removed and hibernated environments (local activities)."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

from isolator.contracts.archive import (
    BringBackInput,
    BroughtBack,
    DiskUse,
    ExpiredArchives,
    PrunedArchives,
    RecordBroughtBackInput,
    RecordRestoredInput,
    RemovedEnvironment,
    RemovedListing,
    RemovedQuery,
)
from isolator.contracts.codebase import Codebase
from isolator.contracts.environment import Environment, IdentityQuery, MarkDestroyedInput
from workflows.steps.options import HEARTBEAT_TIMEOUT, LOCAL_OPTIONS, RETRY_POLICY, host_queue


async def list_removed_environments(query: RemovedQuery) -> RemovedListing:
    return await workflow.execute_local_activity(
        "list_removed_environments", query, result_type=RemovedListing, **LOCAL_OPTIONS
    )


async def find_removed_environment(environment_id: str) -> RemovedEnvironment | None:
    return await workflow.execute_local_activity(
        "find_removed_environment", environment_id, result_type=RemovedEnvironment | None, **LOCAL_OPTIONS
    )


async def find_returning_environment(query: IdentityQuery) -> RemovedEnvironment | None:
    return await workflow.execute_local_activity(
        "find_returning_environment", query, result_type=RemovedEnvironment | None, **LOCAL_OPTIONS
    )


async def record_restored_environment(request: RecordRestoredInput) -> Environment:
    return await workflow.execute_local_activity(
        "record_restored_environment", request, result_type=Environment, **LOCAL_OPTIONS
    )


async def mark_environment_hibernated(request: MarkDestroyedInput) -> None:
    await workflow.execute_local_activity("mark_environment_hibernated", request, **LOCAL_OPTIONS)


async def mark_environment_awake(environment_id: str) -> None:
    await workflow.execute_local_activity("mark_environment_awake", environment_id, **LOCAL_OPTIONS)


async def find_expired_archives(codebase: Codebase) -> ExpiredArchives:
    return await workflow.execute_local_activity(
        "find_expired_archives", codebase, result_type=ExpiredArchives, **LOCAL_OPTIONS
    )


async def mark_archives_pruned(pruned: PrunedArchives) -> None:
    await workflow.execute_local_activity("mark_archives_pruned", pruned, **LOCAL_OPTIONS)


async def record_disk_use(use: DiskUse) -> None:
    await workflow.execute_local_activity("record_disk_use", use, **LOCAL_OPTIONS)


async def bring_archive_into_worktree(request: BringBackInput) -> BroughtBack:
    """On the codebase's host: the archived files into the active worktree of their branch, if it has none of its own."""
    return await workflow.execute_activity(
        "bring_archive_into_worktree", request, result_type=BroughtBack, task_queue=host_queue(request.codebase.host),
        start_to_close_timeout=timedelta(minutes=10), heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=RETRY_POLICY,
    )


async def record_brought_back(record: RecordBroughtBackInput) -> None:
    await workflow.execute_local_activity("record_brought_back", record, **LOCAL_OPTIONS)
