"""An automation as the API and the dashboard show it: its definition, its state, its next firing
(from its Temporal Schedule) and its last firings with their runs."""

from __future__ import annotations

from typing import Any

import asyncpg
from temporalio.client import Client
from temporalio.service import RPCError

from activities.automations import schedules
from activities.automations.records import AutomationRecords, StoredAutomation


async def next_firing(client: Client, stored: StoredAutomation) -> str | None:
    if stored.automation.schedule is None or stored.paused:
        return None
    try:
        described = await client.get_schedule_handle(schedules.schedule_id(stored.automation.name)).describe()
    except RPCError:
        return None
    upcoming = described.info.next_action_times
    return upcoming[0].isoformat() if upcoming else None


async def automation_view(pool: asyncpg.Pool, client: Client, stored: StoredAutomation, firings: int = 5) -> dict[str, Any]:
    automation = stored.automation
    codebase = await pool.fetchval("SELECT name FROM codebases WHERE id = $1::uuid", stored.codebase_id)
    return {
        "name": automation.name,
        "origin": automation.origin,
        "codebase": codebase,
        "schedule": automation.schedule.spelled() if automation.schedule else None,
        "timezone": automation.schedule.timezone if automation.schedule else None,
        "on": [trigger.spelled() for trigger in automation.triggers],
        "report": automation.report.spelled(),
        "results": automation.results,
        "memory": automation.memory,
        "maxCostUsd": automation.max_cost_usd,
        "dailyBudgetUsd": automation.daily_budget_usd,
        "paused": stored.paused,
        "pausedReason": stored.paused_reason or None,
        "failuresInARow": stored.failures_in_a_row,
        "nextFiring": await next_firing(client, stored),
        "firings": [{
            "workflowId": row["workflow_id"], "trigger": row["trigger"], "state": row["state"],
            "runId": str(row["run_id"]) if row["run_id"] else None, "costUsd": float(row["cost_usd"]),
            "pullRequest": row["pull_request_url"], "startedAt": row["started_at"].isoformat(),
            "finishedAt": row["finished_at"].isoformat() if row["finished_at"] else None,
        } for row in await AutomationRecords(pool).firings(automation.name, firings)],
    }
