"""A codebase's daily budget (AGENT_DAILY_BUDGET_USD) and its raises for the day (`/budget +10`)."""

from __future__ import annotations

import uuid

import asyncpg
from temporalio import activity

from activities.runs.sessions import AgentSessions, today_utc
from isolator.contracts.approvals import BudgetRaise, BudgetView
from isolator.settings import Settings


async def raised_today(pool: asyncpg.Pool, codebase_id: str) -> float:
    return float(await pool.fetchval("SELECT coalesce(sum(amount_usd), 0) FROM budget_raises WHERE codebase_id = $1 "
                                     "AND day = $2", uuid.UUID(codebase_id), today_utc().date()))


class BudgetActivities:
    def __init__(self, pool: asyncpg.Pool, settings: Settings) -> None:
        self.pool = pool
        self.settings = settings
        self.sessions = AgentSessions(pool)

    @activity.defn
    async def raise_daily_budget(self, raising: BudgetRaise) -> BudgetView:
        """Today's budget raised by the amount; with no budget set, nothing is recorded (a raise of
        nothing would otherwise count once a budget is set later the same day)."""
        if self.settings.agent_daily_budget_usd is None:
            return await self.daily_budget(raising.codebase_id)
        await self.pool.execute(
            """INSERT INTO budget_raises (codebase_id, day, amount_usd, raised_by, platform, conversation_id, key)
               VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (key) DO NOTHING""",
            uuid.UUID(raising.codebase_id), today_utc().date(), raising.amount_usd, raising.by, raising.platform,
            raising.conversation_id, raising.key)
        return await self.daily_budget(raising.codebase_id)

    @activity.defn
    async def daily_budget(self, codebase_id: str) -> BudgetView:
        rows = await self.pool.fetch(
            "SELECT amount_usd, raised_by, raised_at FROM budget_raises WHERE codebase_id = $1 AND day = $2 ORDER BY id",
            uuid.UUID(codebase_id), today_utc().date())
        return BudgetView(
            self.settings.agent_daily_budget_usd, float(sum(row["amount_usd"] for row in rows)),
            await self.sessions.spent_today(codebase_id),
            [f"+${row['amount_usd']:.2f} by {row['raised_by']} at {row['raised_at']:%H:%M} UTC" for row in rows])
