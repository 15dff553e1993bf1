"""The Grafana dashboard (docs/grafana-dashboard.json), the alerts (docs/prometheus-alerts.yml) and
docs/observability.md name only metrics the service exports, and the page documents every one: a metric
renamed in the code and not there fails here."""

from __future__ import annotations

import re

import asyncpg
import httpx
from temporalio.client import Client

from api.app import create_app
from isolator.settings import Settings
from tests.metrics import OBSERVABILITY, alert_expressions, dashboard_expressions, names_in, sample_names


async def exported(settings: Settings, db: asyncpg.Pool, temporal: Client) -> set[str]:
    app = create_app(settings.model_copy(update={"disk_budget_gb": 10}), temporal=temporal, pool=db)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://isolator.test") as api:
        response = await api.get("/metrics")
    assert response.status_code == 200, response.text
    return sample_names(response.text)


def documented_promql() -> list[str]:
    return re.findall(r"```promql\n(.*?)```", OBSERVABILITY.read_text(), re.S)


async def test_the_dashboard_alerts_and_docs_name_exported_metrics(settings: Settings, db: asyncpg.Pool,
                                                                   temporal: Client) -> None:
    names = await exported(settings, db, temporal)
    assert "isolator_messages_total" in names and "isolator_agent_runs_total" in names
    assert names_in(dashboard_expressions(), "isolator_") - names == set()
    assert names_in(alert_expressions(), "isolator_") - names == set()
    assert documented_promql(), "docs/observability.md shows its alerts as ```promql blocks"
    assert names_in(documented_promql(), "isolator_") - names == set()
    # the dashboard shows every family of ours, and the page documents every one
    families = {re.sub(r"_(total|bucket|count|sum)$", "", name) for name in names if name.startswith("isolator_")}
    shown = {re.sub(r"_(total|bucket|count|sum)$", "", name) for name in names_in(dashboard_expressions(), "isolator_")}
    assert families - shown == set()
    page = OBSERVABILITY.read_text()
    assert {family for family in families if f"`{family}" not in page} == set()


def test_the_alerts_the_issue_asks_for_are_there() -> None:
    expressions = alert_expressions()
    for needed in ("isolator_agent_runs_total", "isolator_approvals_oldest_pending_seconds", "isolator_warm_worktrees",
                   "isolator_disk_budget_bytes", "isolator_cleanup_last_started_timestamp_seconds"):
        assert any(needed in expression for expression in expressions), needed
    same = [" ".join(expression.split()) for expression in expressions]
    assert same == [" ".join(block.split()) for block in documented_promql()], \
        "docs/observability.md shows the alerts of docs/prometheus-alerts.yml, in their order"
