"""The overview's figures of the day (docs/observability.md): messages, runs, cost, approvals waiting and warm
pool hits, from what /metrics counts; each message, run and claim of the day moves its figure."""

from __future__ import annotations

import asyncio
import re
import sys
import uuid
from pathlib import Path

import pytest

from isolator.settings import Settings
from tests.agent_runs import finished_run
from tests.conftest import Stack
from tests.metrics import scrape, value


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"agent_command_line": f"{sys.executable} -c \"print('ok')\""})


async def figures(stack: Stack) -> dict[str, str]:
    page = await stack.api.get("/")
    assert page.status_code == 200, page.text
    return dict(re.findall(r'data-figure="([a-z-]+)">([^<]*)<', page.text))


async def until_messages(stack: Stack, count: int, seconds: float = 30) -> dict[str, str]:
    """Temporal's visibility counts a started workflow a moment after its start."""
    for _ in range(int(seconds * 10)):
        shown = await figures(stack)
        if shown["messages"] == str(count):
            return shown
        await asyncio.sleep(0.1)
    raise AssertionError(f"messages today: {shown}")


async def test_the_overview_shows_the_days_figures(stack: Stack, repo: Path) -> None:
    codebase = await stack.register(repo)
    assert await figures(stack) == {"messages": "0", "runs": "0", "failed": "0", "cost": "$0.00",
                                    "approvals-waiting": "0", "warm-hits": "0"}
    first = (await stack.say("today-1", "hello"))["result"]
    await finished_run(stack, first["agentRunId"])
    second = (await stack.say("today-1", "again"))["result"]
    await finished_run(stack, second["agentRunId"])
    await stack.db.execute("UPDATE agent_runs SET cost_usd = 0.75 WHERE id = $1", uuid.UUID(first["agentRunId"]))
    # a run of yesterday and a claim of yesterday are not today's
    await stack.db.execute("UPDATE agent_runs SET queued_at = now() - interval '2 days', "
                           "started_at = now() - interval '2 days' WHERE id = $1", uuid.UUID(second["agentRunId"]))
    await stack.db.execute("UPDATE isolation_environments SET metadata = metadata || '{\"warm\": true}' "
                           "WHERE id = $1", uuid.UUID(first["environmentId"]))

    shown = await until_messages(stack, 2)

    assert shown == {"messages": "2", "runs": "1", "failed": "0", "cost": "$0.75", "approvals-waiting": "0",
                     "warm-hits": "1"}, shown
    samples = await scrape(stack.api)  # the same counters, since ever
    assert value(samples, "isolator_agent_runs_total") == 2
    assert value(samples, "isolator_agent_cost_usd_total", codebase=codebase["name"]) == 0.75
    assert value(samples, "isolator_warm_claims_total", codebase=codebase["name"]) == 1
