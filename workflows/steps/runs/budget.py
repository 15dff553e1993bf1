"""Stubs of activities/runs/budget.py: a codebase's daily budget, and `/budget +10`."""

from __future__ import annotations

from temporalio import workflow

from isolator.contracts.approvals import BudgetRaise, BudgetView
from workflows.steps.options import LOCAL_OPTIONS


async def raise_daily_budget(raising: BudgetRaise) -> BudgetView:
    return await workflow.execute_local_activity("raise_daily_budget", raising, result_type=BudgetView,
                                                 **LOCAL_OPTIONS)


async def daily_budget(codebase_id: str) -> BudgetView:
    return await workflow.execute_local_activity("daily_budget", codebase_id, result_type=BudgetView,
                                                 **LOCAL_OPTIONS)
