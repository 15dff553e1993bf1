"""What one run may cost: AGENT_MAX_COST_USD, past which it asks a person to go on (docs/approvals.md),
or, for an automation's firing, its own `max_cost_usd` when lower, past which it stops: nobody is there
to ask (docs/automations.md)."""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

from isolator.settings import Settings


@dataclass(frozen=True)
class CostCap:
    usd: float | None
    asks: bool  # past it the run waits for a person's yes; False: it stops there
    source: str  # named when the run is past it


class OverBudget(Exception):
    """The agent reported more cost than its run's CostCap allows."""

    def __init__(self, text: str, cap: CostCap) -> None:
        super().__init__(text)
        self.cap = cap


async def cost_cap(pool: asyncpg.Pool, settings: Settings, platform: str, conversation_id: str) -> CostCap:
    operators = CostCap(settings.agent_max_cost_usd, True, "AGENT_MAX_COST_USD")
    if platform != "automation":
        return operators
    own = await pool.fetchval(
        """SELECT (a.definition->>'max_cost_usd')::float FROM automation_firings f
           JOIN automations a ON a.name = f.automation WHERE f.conversation_id = $1
           ORDER BY f.started_at DESC LIMIT 1""", conversation_id)
    if own is None or (operators.usd is not None and operators.usd <= own):
        return operators
    return CostCap(own, False, "its automation's max_cost_usd")
