"""Typed calls of the lifecycle activities: removal, environment signals, listings and the survey."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

from activities.contracts import Codebase, Environment
from activities.worktree_contracts import RemovalReport, RemoveWorktreeInput, SurveyInput, WorktreeSurvey
from activities.lifecycle_contracts import (
    AttachRequest,
    DestroyEnvironmentInput,
    EnvironmentListing,
    EnvironmentRef,
    EnvironmentsOfCodebase,
    MarkDestroyedInput,
    MoveConversationInput,
    NamedEnvironmentQuery,
    SignalRequest,
)
from workflows.steps import LOCAL_OPTIONS, RETRY_POLICY, host_queue


async def remove_worktree(environment: EnvironmentRef, force: bool) -> RemovalReport:
    request = RemoveWorktreeInput(environment.codebase, environment.working_path, environment.branch, force)
    return await workflow.execute_activity(
        "remove_worktree", request, result_type=RemovalReport, task_queue=host_queue(environment.codebase.host),
        start_to_close_timeout=timedelta(minutes=5), retry_policy=RETRY_POLICY,
    )


async def mark_environment_destroyed(environment_id: str) -> None:
    await workflow.execute_local_activity("mark_environment_destroyed", MarkDestroyedInput(environment_id), **LOCAL_OPTIONS)


async def attach_environment(request: AttachRequest) -> None:
    await workflow.execute_local_activity("attach_environment", request, **LOCAL_OPTIONS)


async def signal_environment(request: SignalRequest) -> None:
    await workflow.execute_local_activity("signal_environment", request, **LOCAL_OPTIONS)


async def destroy_environment(request: DestroyEnvironmentInput) -> RemovalReport:
    """Ask the environment's workflow to remove it, and wait for what it did."""
    return await workflow.execute_activity(
        "destroy_environment", request, result_type=RemovalReport,
        start_to_close_timeout=timedelta(minutes=10), retry_policy=RETRY_POLICY,
    )


async def list_environments(codebase_id: str) -> EnvironmentListing:
    return await workflow.execute_local_activity(
        "list_environments", EnvironmentsOfCodebase(codebase_id), result_type=EnvironmentListing, **LOCAL_OPTIONS
    )


async def find_named_environment(query: NamedEnvironmentQuery) -> Environment | None:
    return await workflow.execute_local_activity(
        "find_named_environment", query, result_type=Environment | None, **LOCAL_OPTIONS
    )


async def move_conversation(request: MoveConversationInput) -> None:
    await workflow.execute_local_activity("move_conversation", request, **LOCAL_OPTIONS)


async def survey_worktrees(request: SurveyInput) -> WorktreeSurvey:
    return await workflow.execute_activity(
        "survey_worktrees", request, result_type=WorktreeSurvey, task_queue=host_queue(request.codebase.host),
        start_to_close_timeout=timedelta(minutes=5), retry_policy=RETRY_POLICY,
    )


async def list_codebases() -> list[Codebase]:
    return await workflow.execute_local_activity("list_codebases", result_type=list[Codebase], **LOCAL_OPTIONS)
