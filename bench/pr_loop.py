"""The pull-request loop's hand-off: from a red check suite's webhook acknowledged (2xx) to the agent
running the fix, the loop's GitHub reads (the check runs, the Actions job and its 300-line log through the
logs endpoint's redirect) from the fake API included;
against a chat follow-up's hand-off in the same worktree (test adapter 2xx to the agent running),
alternating. Target: at most 2x.

The PR and the heads the service pushed are written into the database as the results step would: the
case measures the loop, not the push."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import asyncpg

from bench.agents import NO_OP, run_ended, set_agent, started_at
from bench.figures import Figure, Latency, verdict
from bench.messages import start_conversation
from bench.stack import Stack
from isolator.contracts.pr_loop import LoopDecision
from tests.fakes.github_checks import Job, Step
from tests.platforms.github import signed
from tests.platforms.github_ci import check_suite_completed
from workflows.message import MessageWorkflow
from workflows.pr_loop import PullRequestLoopWorkflow

REPOSITORY = "octo-org/loop-bench"
NUMBER = 7
LOG = "\n".join([f"tests/test_{n}.py::test_it PASSED" for n in range(300)] + ["AssertionError: 1 != 2"])


async def fix_hand_off(stack: Stack, repository: Path, runs: int) -> list[Figure]:
    started_log = stack.work / "records" / "agent-started.log"  # SANDBOX_WRITABLE_PATHS of the bench's stack
    stack.github.add_repository(REPOSITORY)
    registered = await stack.api.post("/api/codebases", json={"path": str(repository),
                                                              "url": f"https://github.com/{REPOSITORY}"})
    registered.raise_for_status()
    codebase_id = registered.json()["id"]
    await set_agent(stack, codebase_id, ["sh", "-c", NO_OP, str(started_log)])
    branch = (await start_conversation(stack, "loop", repository))["branch"]
    pool = await asyncpg.connect(stack.database_url)
    fixes, follow_ups = [], []
    try:
        await pool.execute(
            """INSERT INTO pull_requests (codebase_id, branch_name, remote_branch, repository, number, url, base_branch,
                                          draft, origin, opened_by)
               VALUES ($1::uuid, $2, $2, $3, $4, $5, 'main', true, 'opened', 'test:loop')""",
            codebase_id, branch, REPOSITORY, NUMBER, f"https://github.com/{REPOSITORY}/pull/{NUMBER}")
        for _ in range(runs):
            fixes.append(await _fix(stack, pool, started_log, codebase_id, branch))
            follow_ups.append(await _follow_up(stack, pool, started_log))
    finally:
        await pool.close()
    fix, follow_up = Latency.of(fixes), Latency.of(follow_ups)
    ratio = fix.p50 / follow_up.p50
    return [Figure("red CI to the fix run's agent, 2xx to the agent running", str(fix),
                   f"chat follow-up: {follow_up}", verdict(ratio <= 2),
                   {"latency": vars(fix), "baseline": vars(follow_up), "ratio_p50": round(ratio, 2)}),
            Figure("  against the chat follow-up (p50)", f"x{ratio:.2f} (target <= x2)")]


async def _fix(stack: Stack, pool: asyncpg.Connection, started_log: Path, codebase_id: str, branch: str) -> float:
    sha = uuid.uuid4().hex + uuid.uuid4().hex[:8]
    await pool.execute("INSERT INTO pushed_heads (codebase_id, sha, branch_name) VALUES ($1::uuid, $2, $3)",
                       codebase_id, sha, branch)
    await pool.execute("UPDATE pull_requests SET fix_attempts = 0 WHERE number = $1", NUMBER)  # no cap in a bench
    # As GitHub Actions reports: a workflow run's check suite, its failing job with a log to cut.
    run = stack.github.checks.add_workflow_run(REPOSITORY, sha, branch, "failure", pull_numbers=(NUMBER,), jobs=[
        Job("tests", "failure", steps=[Step("Check out"), Step("Run tests", "failure", LOG)])])
    body = json.dumps(check_suite_completed(REPOSITORY, run.check_suite_id, sha, branch, "failure", (NUMBER,),
                                            api_url=stack.github.api_url)).encode()
    headers = {"content-type": "application/json", "x-github-event": "check_suite",
               "x-github-delivery": str(uuid.uuid4()), **signed(body)}
    response = await stack.api.post("/webhooks/github", content=body, headers=headers)
    answered = time.time()
    response.raise_for_status()
    handle = stack.temporal.get_workflow_handle_for(PullRequestLoopWorkflow.run, response.json()["workflow_id"])
    decision: LoopDecision = await handle.result()
    assert decision.run_id is not None, decision
    assert await run_ended(pool, decision.run_id) == "done"
    return (started_at(started_log, decision.run_id) - answered) * 1000


async def _follow_up(stack: Stack, pool: asyncpg.Connection, started_log: Path) -> float:
    response = await stack.api.post("/test/message", json={"conversationId": "loop", "message": "go on"})
    answered = time.time()
    response.raise_for_status()
    handle = stack.temporal.get_workflow_handle_for(MessageWorkflow.run, response.json()["workflowId"])
    run_id = (await handle.result()).run_id
    assert run_id is not None and await run_ended(pool, run_id) == "done"
    return (started_at(started_log, run_id) - answered) * 1000
