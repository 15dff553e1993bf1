"""`/budget`: today's spend against AGENT_DAILY_BUDGET_USD; `/budget +10` raises it for today (an
ADMIN_USERS person's, when the platform lists them), recorded with who and when."""

from __future__ import annotations

import re

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from isolator.contracts.approvals import BudgetView

USAGE = "Usage: `/budget` shows today's spending; `/budget +10` adds $10 to today's budget of this codebase."
_AMOUNT = re.compile(r"^\+?\$?(\d{1,6}(?:\.\d{1,2})?)$")


def amount_of(args: list[str]) -> float | None:
    """`+10`, `+$2.50`, `10`; None for anything else (or nothing, or zero)."""
    found = _AMOUNT.match("".join(args)) if args else None
    return float(found.group(1)) if found and float(found.group(1)) > 0 else None


def describe(budget: BudgetView, raised_now: float | None = None, by: str = "") -> str:
    """Today's spending against the budget; after `/budget +N`, the raise first (or that there was no
    budget to raise, and how to set one)."""
    if budget.budget_usd is None:
        spent = f"${budget.spent_usd:.2f} spent today"
        if raised_now is None:
            return f"No daily budget is set (AGENT_DAILY_BUDGET_USD): {spent}."
        return (f"Nothing was raised: no daily budget is set, so there is none to add ${raised_now:.2f} to ({spent}). "
                "To set one, start the service with AGENT_DAILY_BUDGET_USD, in dollars per codebase and UTC day "
                "(for example `AGENT_DAILY_BUDGET_USD=20`); `/budget +10` then raises it for today.")
    lines = [f"Raised today's budget by ${raised_now:.2f} ({by})."] if raised_now is not None else []
    total = budget.budget_usd + budget.raised_usd
    lines.append(f"Today: ${budget.spent_usd:.2f} spent of ${total:.2f} "
                 f"(AGENT_DAILY_BUDGET_USD ${budget.budget_usd:.2f}" +
                 (f" + ${budget.raised_usd:.2f} raised today" if budget.raised_usd else "") + "). It renews at midnight UTC.")
    lines += [f"• {line}" for line in budget.raises]
    return "\n".join(lines)
