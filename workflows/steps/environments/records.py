"""Stubs of activities/environments/records.py: the environment rows (local activities)."""

from __future__ import annotations

from temporalio import workflow

from isolator.contracts.cleanup import EnvironmentListing
from isolator.contracts.environment import (
    Attached,
    AttachInput,
    Environment,
    EnvironmentCount,
    EnvironmentsOfCodebase,
    IdentityQuery,
    MarkDestroyedInput,
    NamedEnvironmentQuery,
    RecordedEnvironment,
    RecordEnvironmentInput,
    Retired,
    RetireInput,
)
from isolator.contracts.setup import EnvironmentDetails, SetupStateInput
from workflows.steps.options import LOCAL_OPTIONS


async def find_environment_by_identity(query: IdentityQuery) -> Environment | None:
    return await workflow.execute_local_activity(
        "find_environment_by_identity", query, result_type=Environment | None, **LOCAL_OPTIONS
    )


async def count_environments(codebase_id: str) -> EnvironmentCount:
    return await workflow.execute_local_activity(
        "count_environments", EnvironmentsOfCodebase(codebase_id), result_type=EnvironmentCount, **LOCAL_OPTIONS
    )


async def retire_environment(request: RetireInput) -> Retired:
    return await workflow.execute_local_activity("retire_environment", request, result_type=Retired, **LOCAL_OPTIONS)


async def attach_conversation(request: AttachInput) -> Attached:
    return await workflow.execute_local_activity("attach_conversation", request, result_type=Attached, **LOCAL_OPTIONS)


async def record_environment(request: RecordEnvironmentInput) -> RecordedEnvironment:
    return await workflow.execute_local_activity(
        "record_environment", request, result_type=RecordedEnvironment, **LOCAL_OPTIONS
    )


async def list_environments(codebase_id: str) -> EnvironmentListing:
    return await workflow.execute_local_activity(
        "list_environments", EnvironmentsOfCodebase(codebase_id), result_type=EnvironmentListing, **LOCAL_OPTIONS
    )


async def list_hibernated_environments(codebase_id: str) -> EnvironmentListing:
    return await workflow.execute_local_activity(
        "list_environments", EnvironmentsOfCodebase(codebase_id, hibernated=True), result_type=EnvironmentListing,
        **LOCAL_OPTIONS,
    )


async def find_named_environment(query: NamedEnvironmentQuery) -> Environment | None:
    return await workflow.execute_local_activity(
        "find_named_environment", query, result_type=Environment | None, **LOCAL_OPTIONS
    )


async def mark_environment_destroyed(request: MarkDestroyedInput) -> None:
    await workflow.execute_local_activity("mark_environment_destroyed", request, **LOCAL_OPTIONS)


async def record_setup_state(request: SetupStateInput) -> None:
    await workflow.execute_local_activity("record_setup_state", request, **LOCAL_OPTIONS)


async def environment_details(environment_id: str) -> EnvironmentDetails:
    return await workflow.execute_local_activity(
        "environment_details", environment_id, result_type=EnvironmentDetails, **LOCAL_OPTIONS
    )
