"""GET /metrics (docs/observability.md): after real messages through the test adapter, real runs of the real
Claude Code (against the fake Anthropic API) and of a failing program, a person's answer and a warm claim,
every counter moved as it should, read from the API's own output with prometheus_client's parser.
Real git, PostgreSQL, Temporal and bubblewrap."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from isolator.settings import Settings
from tests.agent_runs import finished_run
from tests.approvals import claude, press, request_of, runs_when_ended, waiting_for_answer  # noqa: F401 - claude: the fixture
from tests.conftest import Stack
from tests.fakes.anthropic_api import FakeAnthropicApi
from tests.fakes.model_api import run, text
from tests.metrics import moved, scrape, value


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"max_worktrees_per_codebase": 10})


async def warm_ready(stack: Stack, codebase_id: str, seconds: float = 90) -> None:
    for _ in range(int(seconds * 10)):
        if await stack.db.fetchval("SELECT count(*) FROM warm_worktrees WHERE codebase_id = $1::uuid AND state = 'ready'",
                                   codebase_id):
            return
        await asyncio.sleep(0.1)
    raise AssertionError("no warm worktree became ready")


async def use_program(stack: Stack, codebase_id: str, code: str) -> None:
    response = await stack.api.patch(f"/api/codebases/{codebase_id}",
                                     json={"agent_command": [sys.executable, "-c", code]})
    assert response.status_code == 200, response.text


async def test_every_counter_moves_with_what_the_service_did(stack: Stack, repo: Path, claude: FakeAnthropicApi) -> None:
    codebase = await stack.register(repo)
    assert (await stack.api.patch(f"/api/codebases/{codebase['id']}", json={"warm_worktrees": 1})).status_code == 200
    await warm_ready(stack, codebase["id"])
    before = await scrape(stack.api)

    # a create (from the warm pool), whose run of Claude Code stops at its budget and asks a person
    stack.settings.agent_max_cost_usd = 0.001
    claude.then(run("echo one"), text("Went on after the budget."))
    created = (await stack.say("metrics-1", "spend"))["result"]
    assert created["outcome"] == "created", created
    asked = await request_of(stack, "metrics-1")
    await waiting_for_answer(stack, created["environmentId"])
    stack.settings.agent_max_cost_usd = None
    assert (await press(stack, asked["code"], "continue"))[0] == 200
    await runs_when_ended(stack, "metrics-1", 2)
    # a reuse, whose program ends well; then a create elsewhere, whose program fails
    await use_program(stack, codebase["id"], "print('done')")
    reused = (await stack.say("metrics-1", "again"))["result"]
    assert reused["outcome"] == "reused", reused
    assert (await finished_run(stack, reused["agentRunId"]))["status"] == "done"
    await use_program(stack, codebase["id"], "import sys; sys.exit(3)")
    other = (await stack.say("metrics-2", "break"))["result"]
    assert other["outcome"] == "created", other
    assert (await finished_run(stack, other["agentRunId"]))["status"] == "failed"

    after = await scrape(stack.api)
    assert moved(before, after, "isolator_messages_total", platform="test", outcome="created") == 2
    assert moved(before, after, "isolator_messages_total", platform="test", outcome="reused") == 1
    assert moved(before, after, "isolator_isolation_decision_seconds_count", outcome="created") == 2
    assert moved(before, after, "isolator_isolation_decision_seconds_count", outcome="reused") == 1
    assert moved(before, after, "isolator_agent_runs_total", agent="claude", end="over_budget") == 1
    assert moved(before, after, "isolator_agent_runs_total", end="done") == 2  # the answer's continuation, the reuse's
    assert moved(before, after, "isolator_agent_runs_total", end="failed") == 1
    assert moved(before, after, "isolator_agent_run_duration_seconds_count") == 4
    assert moved(before, after, "isolator_agent_run_queue_wait_seconds_count") == 4
    assert moved(before, after, "isolator_agent_cost_usd_total", codebase="project", agent="claude") > 0
    assert moved(before, after, "isolator_agent_tokens_total", codebase="project", agent="claude", kind="output") > 0
    assert moved(before, after, "isolator_approvals_asked_total", kind="budget") == 1
    assert moved(before, after, "isolator_approvals_answered_total", kind="budget") == 1
    assert value(after, "isolator_approvals_pending") == 0
    assert moved(before, after, "isolator_approval_answer_seconds_count", kind="budget") == 1
    assert moved(before, after, "isolator_warm_claims_total", codebase="project") >= 1
    assert value(after, "isolator_worktrees", codebase="project", state="active") == 2
    assert value(after, "isolator_warm_pool_size", codebase="project") == 1
    assert value(after, "isolator_agent_runs_in_progress") == 0
