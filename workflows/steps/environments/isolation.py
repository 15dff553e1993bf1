"""Calls of activities/environments/isolation.py: the environments' disk work, on the codebase's host.

A check, an adoption search and a creation run as local activities when the codebase is on this
worker's host, and go to the task queue of the codebase's host, `{queue}@{host}`, only when it is
elsewhere. Removal and survey always go to the host's queue."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from temporalio import workflow

from isolator.contracts.cleanup import CodebaseCounts
from isolator.contracts.codebase import Codebase
from isolator.contracts.environment import (
    Environment,
    EnvironmentCheck,
    EnvironmentCheckInput,
    EnvironmentRef,
)
from isolator.contracts.isolation import CREATE, DESTROY, LIST, PRUNE, RESTORE, HostOperation
from isolator.contracts.worktree import (
    Adoptable,
    AdoptionSearch,
    AdoptQuery,
    PruneArchivesInput,
    PrunedArchive,
    RemovalReport,
    RemoveWorktreeInput,
    RestoredWorktree,
    RestoreWorktreeInput,
    SurveyInput,
    WorktreeCreation,
    WorktreeReady,
    WorktreeRequest,
    WorktreeSurvey,
)
from workflows.steps.options import (
    HEARTBEAT_TIMEOUT,
    LOCAL_OPTIONS,
    RETRY_POLICY,
    host_queue,
)
from workflows.steps.versions import create_path_v2_or_later


async def validate_environment(environment: Environment, host: str) -> EnvironmentCheck:
    """Is the environment's worktree still on disk? A stat on its host: local when that is this host."""
    check = EnvironmentCheckInput(working_path=environment.working_path, host=host, provider=environment.provider)
    result = await workflow.execute_local_activity(
        "validate_environment", check, result_type=EnvironmentCheck, **LOCAL_OPTIONS
    )
    if result.status != "elsewhere":
        return result
    return await workflow.execute_activity(
        "validate_environment", check, result_type=EnvironmentCheck, task_queue=host_queue(host),
        start_to_close_timeout=timedelta(seconds=30), heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=RETRY_POLICY,
    )


async def find_adoptable_worktree(query: AdoptQuery) -> Adoptable | None:
    """Worktrees are listed on the codebase's host: a local activity when that is this worker's host,
    which saves the round trip through the server."""
    host_options = dict(task_queue=host_queue(query.codebase.host), start_to_close_timeout=timedelta(minutes=1),
                        heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=RETRY_POLICY)
    if not create_path_v2_or_later():
        return await workflow.execute_activity(
            "find_adoptable_worktree", query, result_type=Adoptable | None, **host_options
        )
    # It waits for a creation under way on the same path, which can take longer than a database call.
    search = await workflow.execute_local_activity(
        "find_adoptable_worktree", query, result_type=AdoptionSearch,
        **{**LOCAL_OPTIONS, "start_to_close_timeout": timedelta(minutes=1)},
    )
    if search.outcome == "elsewhere":
        search = await workflow.execute_activity(
            "find_adoptable_worktree", query, result_type=AdoptionSearch, **host_options
        )
    return search.adoptable


async def create_worktree(request: WorktreeRequest, locally: bool) -> WorktreeReady:
    """`locally`: first try as a local activity, which works when the codebase is on this host."""
    if locally:
        # git can take minutes on a large checkout: the SDK keeps the workflow task alive meanwhile
        creation = await workflow.execute_local_activity(
            "create_worktree_here", request, result_type=WorktreeCreation,
            start_to_close_timeout=CREATE.timeout, retry_policy=RETRY_POLICY,
        )
        if creation.worktree is not None:
            return creation.worktree
    return await _on_host(CREATE, request)


async def remove_worktree(environment: EnvironmentRef, force: bool) -> RemovalReport:
    """Archived under the environment's id first (an undone create has none: nothing to archive)."""
    return await _on_host(DESTROY, RemoveWorktreeInput(
        environment.codebase, environment.working_path, environment.branch, force,
        provider=environment.provider, environment_id=environment.environment_id,
    ))


async def survey_worktrees(request: SurveyInput) -> WorktreeSurvey:
    return await _on_host(LIST, request)


async def restore_worktree(request: RestoreWorktreeInput) -> RestoredWorktree:
    return await _on_host(RESTORE, request)


async def prune_archives(request: PruneArchivesInput) -> list[PrunedArchive]:
    return await _on_host(PRUNE, request)


async def _on_host(operation: HostOperation, request: Any) -> Any:
    """`operation` on the task queue of the host that holds the request's codebase."""
    return await workflow.execute_activity(
        operation.activity, request, result_type=operation.result_type, task_queue=host_queue(request.codebase.host),
        start_to_close_timeout=operation.timeout, heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=RETRY_POLICY,
    )


async def count_worktrees(codebase: Codebase) -> CodebaseCounts:
    return await workflow.execute_activity(
        "count_worktrees", codebase, result_type=CodebaseCounts, task_queue=host_queue(codebase.host),
        start_to_close_timeout=timedelta(minutes=5), heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=RETRY_POLICY,
    )
