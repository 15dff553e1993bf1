"""The pull-request loop's hand-offs, each against a chat follow-up's hand-off in the same worktree (2xx to
the agent running), alternating. Target: at most 2x.

- Red CI: from a red check suite's webhook acknowledged (2xx) to the agent running the fix, the loop's
  GitHub reads (the check runs, the Actions job and its 300-line log through the logs endpoint's redirect)
  from the fake API included; the follow-up through the test adapter.
- `/fix-ci` as a PR's first comment: from the comment's webhook acknowledged to the agent running the fix.
  Each round is a new PR of an issue's branch (it closes the issue), so its conversation has no worktree
  yet and finds the issue's (GitHub's closing issues asked first), then the same reads as above; the
  follow-up is a comment on the issue, whose worktree it is.

The PR and the heads the service pushed are written into the database as the results step would: the
cases measure the loop, not the push."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

import asyncpg

from api.platforms.github.keys import event_key
from bench.agents import NO_OP, run_ended, set_agent, started_at
from bench.figures import Figure, Latency, verdict
from bench.messages import start_conversation
from bench.stack import Stack
from isolator.contracts.message import Resolution, message_workflow_id
from isolator.contracts.pr_loop import LoopDecision
from tests.fakes.github_checks import Job, Step
from tests.platforms.github import comment_event, issues_event, signed
from tests.platforms.github_ci import check_suite_completed, repository_of
from workflows.message import MessageWorkflow
from workflows.pr_loop import PullRequestLoopWorkflow

REPOSITORY = "octo-org/loop-bench"
NUMBER = 7
COMMAND_REPOSITORY = "octo-org/fix-ci-bench"  # the `/fix-ci` case's, with its issue
ISSUE = 1
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
            follow_ups.append(await _follow_up(stack, pool, started_log, "loop"))
    finally:
        await pool.close()
    return _at_most_twice("red CI to the fix run's agent, 2xx to the agent running", fixes,
                          "chat follow-up", follow_ups)


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


async def _follow_up(stack: Stack, pool: asyncpg.Connection, started_log: Path, conversation: str) -> float:
    response = await stack.api.post("/test/message", json={"conversationId": conversation, "message": "go on"})
    answered = time.time()
    response.raise_for_status()
    handle = stack.temporal.get_workflow_handle_for(MessageWorkflow.run, response.json()["workflowId"])
    run_id = (await handle.result()).run_id
    assert run_id is not None and await run_ended(pool, run_id) == "done"
    return (started_at(started_log, run_id) - answered) * 1000


async def fix_ci_first_comment(stack: Stack, repository: Path, runs: int) -> list[Figure]:
    started_log = stack.work / "records" / "agent-started.log"  # SANDBOX_WRITABLE_PATHS of the bench's stack
    stack.github.add_repository(COMMAND_REPOSITORY)
    stack.github.add_issue(COMMAND_REPOSITORY, ISSUE)
    registered = await stack.api.post("/api/codebases", json={"path": str(repository),
                                                              "url": f"https://github.com/{COMMAND_REPOSITORY}"})
    registered.raise_for_status()
    codebase_id = registered.json()["id"]
    await set_agent(stack, codebase_id, ["sh", "-c", NO_OP, str(started_log)])
    pool = await asyncpg.connect(stack.database_url)
    fixes, follow_ups = [], []
    try:
        branch = await _issue_worktree(stack, pool)
        await pool.execute(
            """INSERT INTO pull_requests (codebase_id, branch_name, remote_branch, repository, number, url, base_branch,
                                          draft, origin, opened_by)
               VALUES ($1::uuid, $2, $2, $3, 0, '', 'main', true, 'opened', $4)""",
            codebase_id, branch, COMMAND_REPOSITORY, f"github:{COMMAND_REPOSITORY}#{ISSUE}")
        for number in range(ISSUE + 1, ISSUE + 1 + runs):
            fixes.append(await _fix_ci(stack, pool, started_log, branch, number))
            follow_ups.append(await _on_issue(stack, pool, started_log))
    finally:
        await pool.close()
    return _at_most_twice("`/fix-ci` as a PR's first comment, 2xx to the agent running", fixes,
                          "follow-up on the issue", follow_ups)


def _at_most_twice(case: str, fixes: list[float], baseline: str, follow_ups: list[float]) -> list[Figure]:
    """A fix's latency against its baseline's: the PR loop's target is at most twice it (p50)."""
    fix, follow_up = Latency.of(fixes), Latency.of(follow_ups)
    ratio = fix.p50 / follow_up.p50
    return [Figure(case, str(fix), f"{baseline}: {follow_up}", verdict(ratio <= 2),
                   {"latency": vars(fix), "baseline": vars(follow_up), "ratio_p50": round(ratio, 2)}),
            Figure(f"  against the {baseline} (p50)", f"x{ratio:.2f} (target <= x2)")]


async def _issue_worktree(stack: Stack, pool: asyncpg.Connection) -> str:
    """The issue's worktree, made by its first message (whose run is let end); its branch."""
    _, resolution = await _delivered(stack, "issues", issues_event("opened", ISSUE, "@isolator fix the login"))
    assert resolution.run_id is not None and resolution.branch is not None, resolution
    assert await run_ended(pool, resolution.run_id) == "done"
    return resolution.branch


async def _fix_ci(stack: Stack, pool: asyncpg.Connection, started_log: Path, branch: str, number: int) -> float:
    """A new PR of the issue's branch, red, and `/fix-ci` its first comment."""
    sha = uuid.uuid4().hex + uuid.uuid4().hex[:8]
    stack.github.add_pull(COMMAND_REPOSITORY, number, branch, sha, closes=(ISSUE,))
    await pool.execute("UPDATE pull_requests SET number = $1, fix_attempts = 0 WHERE repository = $2",
                       number, COMMAND_REPOSITORY)
    stack.github.checks.add_workflow_run(COMMAND_REPOSITORY, sha, branch, "failure", pull_numbers=(number,), jobs=[
        Job("tests", "failure", steps=[Step("Check out"), Step("Run tests", "failure", LOG)])])
    comment = comment_event(number, "@isolator /fix-ci", pull=True)
    answered, resolution = await _delivered(stack, "issue_comment", comment)
    assert resolution.replies[-1] == "The agent works on CI's failures.", resolution
    run_id = await pool.fetchval("SELECT id::text FROM agent_runs WHERE message LIKE $1", f"CI failed on {sha[:7]}%")
    assert run_id is not None and await run_ended(pool, run_id) == "done"
    return (started_at(started_log, run_id) - answered) * 1000


async def _on_issue(stack: Stack, pool: asyncpg.Connection, started_log: Path) -> float:
    """The issue's next comment: a chat follow-up in the worktree the PR shares."""
    answered, resolution = await _delivered(stack, "issue_comment", comment_event(ISSUE, "@isolator go on"))
    assert resolution.run_id is not None and await run_ended(pool, resolution.run_id) == "done", resolution
    return (started_at(started_log, resolution.run_id) - answered) * 1000


async def _delivered(stack: Stack, event: str, payload: dict) -> tuple[float, Resolution]:
    """The signed delivery about the case's repository: when it was answered (2xx), and its message's end."""
    payload["repository"] = repository_of(COMMAND_REPOSITORY)
    body = json.dumps(payload).encode()
    headers = {"content-type": "application/json", "x-github-event": event,
               "x-github-delivery": str(uuid.uuid4()), **signed(body)}
    response = await stack.api.post("/webhooks/github", content=body, headers=headers)
    answered = time.time()
    response.raise_for_status()
    key = message_workflow_id("github", event_key(event, payload))
    return answered, await stack.temporal.get_workflow_handle_for(MessageWorkflow.run, key).result()
