"""Asking the human (docs/approvals.md): from an Allow press to the fake model API receiving the resumed
session's request, against a resume of the same session started by hand with the CLI (from its start
to that request), alternating. The real Claude Code; its repository asks before `touch` through its
committed `.isolator.toml`."""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path

import asyncpg

from bench.agents import claude_folder, resumed_by_hand
from bench.figures import Figure, Latency, verdict
from bench.messages import say
from bench.repos import git
from bench.stack import Stack
from tests.fakes.model_api import run, text


def ask_before_touch(repository: Path) -> Path:
    (repository / ".isolator.toml").write_text('[approvals]\nask = ["Bash(touch:*)"]\n')
    git("add", ".isolator.toml", cwd=repository)
    git("commit", "-q", "-m", "ask before touch", cwd=repository)
    return repository


async def allow_to_resume(stack: Stack, codebase_id: str, repository: Path, runs: int) -> list[Figure]:
    from tests.agent_clis import claude_binary

    (await stack.api.patch(f"/api/codebases/{codebase_id}",
                           json={"agent": {"agent": "claude", "executable": str(claude_binary())}})).raise_for_status()
    conversation = f"approvals-{uuid.uuid4().hex[:6]}"
    await say(stack, conversation, f"/clone {repository}")
    pool = await asyncpg.connect(stack.database_url)
    pressed, by_hand = [], []
    try:
        for index in range(runs):
            stack.model.then(run(f"touch approved-{index}.txt"), run(f"touch approved-{index}.txt"), text("ok"))
            response = await stack.api.post("/test/message", json={"conversationId": conversation, "message": "go"})
            response.raise_for_status()
            code = await _pending_code(pool, conversation)
            calls = len(stack.model.calls)
            began = time.time()
            (await stack.api.post(f"/test/approvals/{code}", json={"choice": "once"})).raise_for_status()
            while len(stack.model.calls) <= calls:
                await asyncio.sleep(0.002)
            pressed.append((stack.model.calls[calls].at - began) * 1000)
            await _all_ended(pool, conversation)

            session, worktree = await pool.fetchrow(
                """SELECT r.session_id, e.working_path FROM agent_runs r JOIN isolation_environments e
                   ON e.id = r.environment_id WHERE r.platform = 'test' AND r.conversation_id = $1
                   AND r.session_id IS NOT NULL ORDER BY r.queued_at DESC LIMIT 1""", conversation)
            by_hand.append(await resumed_by_hand(stack, str(claude_binary()), await claude_folder(pool, stack, session),
                                                 session, worktree, b"go on"))
    finally:
        await pool.close()
    figure, baseline = Latency.of(pressed), Latency.of(by_hand)
    ratio = figure.p50 / baseline.p50
    return [Figure("Allow press to the resumed request to the model (real Claude Code)", str(figure),
                   f"resumed by hand: {baseline}", verdict(ratio <= 1.2),
                   {"latency": vars(figure), "baseline": vars(baseline), "ratio_p50": round(ratio, 3),
                    "above_p50": round(figure.p50 - baseline.p50, 1)}),
            Figure("  ratio to a resume by hand (p50)", f"x{ratio:.3f} (target <= 1.2)"),
            Figure("  above a resume by hand (p50)", f"{figure.p50 - baseline.p50:+.1f} ms")]


async def _pending_code(pool: asyncpg.Connection, conversation: str) -> str:
    while (code := await pool.fetchval(
            "SELECT code FROM approvals WHERE platform = 'test' AND conversation_id = $1 AND state = 'pending'",
            conversation)) is None:
        await asyncio.sleep(0.005)
    return code


async def _all_ended(pool: asyncpg.Connection, conversation: str) -> None:
    """Once the resumed run has started (its request reached the model): until it and its request's closing
    are over (the closing is awaited before that run's record starts)."""
    while await pool.fetchval("SELECT count(*) FROM agent_runs WHERE platform = 'test' AND conversation_id = $1 "
                              "AND status IN ('queued', 'running')", conversation):
        await asyncio.sleep(0.005)
