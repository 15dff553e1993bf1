"""Stubs of activities/automations/commands.py: chat's `/automation …`, and `/status`'s automations."""

from __future__ import annotations

from temporalio import workflow

from isolator.contracts.automation_commands import AutomationCommand, ReportPlaceQuery
from workflows.steps.options import LOCAL_OPTIONS


async def automation_command(command: AutomationCommand) -> str:
    return await workflow.execute_local_activity("automation_command", command, result_type=str, **LOCAL_OPTIONS)


async def automations_reporting_here(query: ReportPlaceQuery) -> list[str]:
    return await workflow.execute_local_activity("automations_reporting_here", query, result_type=list[str],
                                                 **LOCAL_OPTIONS)
