"""Stubs of activities/codebases/moving.py: the move's rows (local), and its work on the old and the new host."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy

from isolator.contracts.move import (
    ExportRequest,
    Exported,
    ImportReport,
    ImportRequest,
    MoveAbandoned,
    MoveFinish,
    MovePlan,
    MoveRequest,
)
from workflows.steps.options import HEARTBEAT_TIMEOUT, LOCAL_OPTIONS, RETRY_POLICY, host_queue

# A host that does not take the export within this long is taken for down: origin's archives are used.
OLD_HOST_ANSWERS_WITHIN = timedelta(seconds=10)


async def begin_move(request: MoveRequest) -> MovePlan:
    return await workflow.execute_local_activity("begin_move", request, result_type=MovePlan, **LOCAL_OPTIONS)


async def export_worktrees(request: ExportRequest) -> list[Exported]:
    """On the old host, bounded: a dead host's queue is not waited on (a failure here means "not answered")."""
    return await workflow.execute_activity(
        "export_worktrees", request, result_type=list[Exported], task_queue=host_queue(request.codebase.host),
        schedule_to_start_timeout=OLD_HOST_ANSWERS_WITHIN, start_to_close_timeout=timedelta(minutes=30),
        heartbeat_timeout=HEARTBEAT_TIMEOUT,
        retry_policy=RetryPolicy(initial_interval=timedelta(seconds=1), maximum_attempts=3),
    )


async def release_worktrees(request: ExportRequest) -> None:
    """On the old host, after the move; bounded as the export is (a host that stopped answering keeps them)."""
    await workflow.execute_activity(
        "release_worktrees", request, task_queue=host_queue(request.codebase.host),
        schedule_to_start_timeout=OLD_HOST_ANSWERS_WITHIN, start_to_close_timeout=timedelta(minutes=30),
        heartbeat_timeout=HEARTBEAT_TIMEOUT,
        retry_policy=RetryPolicy(initial_interval=timedelta(seconds=1), maximum_attempts=3),
    )


async def import_worktrees(request: ImportRequest) -> ImportReport:
    return await workflow.execute_activity(
        "import_worktrees", request, result_type=ImportReport, task_queue=host_queue(request.codebase.host),
        start_to_close_timeout=timedelta(hours=1), heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=RETRY_POLICY,
    )


async def abandon_move(abandoned: MoveAbandoned) -> None:
    await workflow.execute_local_activity("abandon_move", abandoned, **LOCAL_OPTIONS)


async def finish_move(finish: MoveFinish) -> None:
    await workflow.execute_local_activity("finish_move", finish, **{**LOCAL_OPTIONS,
                                                                    "start_to_close_timeout": timedelta(minutes=2)})
