"""The coding agent's runs: the hand-off from a message to the agent process, streaming from the
agent's output to the platform, and many runs through AGENT_MAX_CONCURRENT slots.

The agents are tiny real programs set as the agent codebase's own `agent_command`, so the other
benchmarks (no agent configured) are not touched.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
import time
import uuid
from pathlib import Path

import asyncpg

from api.dispatch import dispatch_message
from bench.figures import Figure, Latency, timed, verdict
from bench.messages import say, start_conversation
from bench.stack import Stack
from isolator.contracts.message import MessageInput
from workflows.message import MessageWorkflow

# Records when it started (the run's id and the clock), as soon as a shell can: nothing else.
NO_OP = "printf '%s %s\\n' \"$ISOLATOR_RUN_ID\" \"$(date +%s.%N)\" >> \"$0\""
# Prints `line <n> <clock>` at irregular moments, as an agent writing its answer does.
STREAMER = """
import random, sys, time
sys.stdin.read()
for number in range(int(sys.argv[1])):
    time.sleep(random.uniform(0.2, 1.6))
    print(f"line {number} {time.time():.6f}", flush=True)
"""
SLOTS = 4  # AGENT_MAX_CONCURRENT of the bench's worker (the default)


async def set_agent(stack: Stack, codebase_id: str, argv: list[str]) -> None:
    (await stack.api.patch(f"/api/codebases/{codebase_id}", json={"agent_command": argv})).raise_for_status()


async def run_ended(pool: asyncpg.Connection, run_id: str) -> str:
    while (status := await pool.fetchval("SELECT status FROM agent_runs WHERE id = $1::uuid", run_id)) \
            in ("queued", "running"):
        await asyncio.sleep(0.01)
    return status


async def hand_off(stack: Stack, codebase_id: str, repository: Path, plain: Path, runs: int) -> list[Figure]:
    """From the test adapter's 2xx to the agent process running (it records when it started), on a
    reused worktree; against the reuse path's own latency (a conversation without agent), alternating."""
    started_log = stack.work / "records" / "agent-started.log"  # SANDBOX_WRITABLE_PATHS of the bench's stack
    await set_agent(stack, codebase_id, ["sh", "-c", NO_OP, str(started_log)])
    await start_conversation(stack, "hand-off", repository)
    await start_conversation(stack, "hand-off-reuse", plain)
    pool = await asyncpg.connect(stack.database_url)
    hand_offs, reuses = [], []
    try:
        for _ in range(runs):
            response = await stack.api.post("/test/message", json={"conversationId": "hand-off", "message": "go"})
            answered = time.time()
            response.raise_for_status()
            handle = stack.temporal.get_workflow_handle_for(MessageWorkflow.run, response.json()["workflowId"])
            run_id = (await handle.result()).run_id
            assert await run_ended(pool, run_id) == "done"
            hand_offs.append((started_at(started_log, run_id) - answered) * 1000)
            reuses.append(await timed(lambda: say(stack, "hand-off-reuse")))
    finally:
        await pool.close()
    figure, reuse = Latency.of(hand_offs), Latency.of(reuses)
    above = figure.p50 - reuse.p50
    return [Figure("agent hand-off, 2xx to the agent running", str(figure), f"reuse path: {reuse}",
                   verdict(above <= 20), {"latency": vars(figure), "baseline": vars(reuse), "above_p50": round(above, 1)}),
            Figure("  above the reuse path (p50)", f"{above:+.1f} ms (target <= +20)")]


def started_at(log: Path, run_id: str) -> float:
    for line in reversed(log.read_text().splitlines()):
        if line.startswith(run_id):
            return float(line.split()[1])
    raise AssertionError(f"run {run_id} left no start time")


async def streaming(stack: Stack, codebase_id: str, repository: Path, lines: int) -> list[Figure]:
    """From a line the agent prints to the fake Slack API receiving it (a post or a chat.update)."""
    await set_agent(stack, codebase_id, [sys.executable, "-c", STREAMER, str(lines)])
    conversation = f"C0BENCH:{int(time.time())}.{uuid.uuid4().int % 10**6:06d}"
    await _slack(stack, conversation, f"/clone {repository}")
    result = await _slack(stack, conversation, "stream")
    pool = await asyncpg.connect(stack.database_url)
    try:
        assert await run_ended(pool, result.run_id) == "done"
    finally:
        await pool.close()
    printed = {}
    for line in (await stack.api.get(f"/api/runs/{result.run_id}")).json()["output"].splitlines():
        if match := re.fullmatch(r"line (\d+) ([\d.]+)", line):
            printed[match[1]] = float(match[2])
    latencies = []
    for number, moment in printed.items():
        arrival = next(when for when, text in stack.slack.arrivals if re.search(rf"^line {number} ", text, re.M))
        latencies.append((arrival - moment) * 1000)
    figure = Latency.of(latencies)
    return [Figure("agent streaming, printed to Slack's API", str(figure), "", verdict(figure.p50 <= 1500),
                   {"latency": vars(figure)}),
            Figure("  p50", f"{figure.p50 / 1000:.2f} s (target <= 1.5 s)")]


async def _slack(stack: Stack, conversation: str, text: str):  # type: ignore[no-untyped-def]
    message = MessageInput(platform="slack", conversation_id=conversation, text=text, message_key=uuid.uuid4().hex,
                           default_host=stack.host)
    return await (await dispatch_message(stack.temporal, stack.task_queue, message)).result()


async def many_runs(stack: Stack, codebase_id: str, repository: Path, conversations: int,
                    seconds: float) -> list[Figure]:
    """`conversations` runs of a `seconds` agent at once, through the worker's SLOTS: wall time
    against the ideal (every slot busy all the time), and the worker's memory before and at its peak."""
    names = [f"many-{index}" for index in range(conversations)]
    await set_agent(stack, codebase_id, [])  # the worktrees first, without runs: the runs are what is measured
    for name in names:
        await start_conversation(stack, name, repository)
    await set_agent(stack, codebase_id, ["sleep", str(seconds)])
    pool = await asyncpg.connect(stack.database_url)
    try:
        worker = stack.memory()["worker"]
        before = worker.memory_info().rss / 2**20
        peak = before
        began = time.monotonic()
        sent = await asyncio.gather(*(stack.api.post("/test/message", json={"conversationId": name, "message": "go"})
                                      for name in names))
        handles = [stack.temporal.get_workflow_handle_for(MessageWorkflow.run, response.json()["workflowId"]) for response in sent]
        run_ids = [(await handle.result()).run_id for handle in handles]
        pending = set(run_ids)
        while pending:
            ended = await pool.fetch("SELECT id::text FROM agent_runs WHERE id = ANY($1::uuid[]) "
                                     "AND status NOT IN ('queued', 'running')", list(pending))
            pending -= {row["id"] for row in ended}
            peak = max(peak, worker.memory_info().rss / 2**20)
            await asyncio.sleep(0.05)
        wall = time.monotonic() - began
        statuses = await pool.fetch("SELECT status, count(*) FROM agent_runs WHERE id = ANY($1::uuid[]) GROUP BY 1",
                                    run_ids)
    finally:
        await pool.close()
    assert {row["status"]: row["count"] for row in statuses} == {"done": conversations}, statuses
    ideal = conversations * seconds / SLOTS
    ratio = wall / ideal
    return [Figure(f"{conversations} runs of a {seconds:g} s agent, {SLOTS} at once", f"{wall:.1f} s",
                   f"ideal: {ideal:.1f} s", verdict(ratio <= 1.15 and peak - before <= 50),
                   {"wall_seconds": round(wall, 2), "ideal_seconds": ideal, "ratio": round(ratio, 3),
                    "worker_rss_mib": {"before": round(before, 1), "peak": round(peak, 1)}}),
            Figure("  ratio to the ideal", f"x{ratio:.3f} (target <= 1.15)"),
            Figure("  worker memory", f"{before:.0f} MiB before, {peak:.0f} MiB at the peak (flat: +{peak - before:.0f})")]


async def real_cli_hand_off(stack: Stack, codebase_id: str, repository: Path, runs: int) -> list[Figure]:
    """The real Claude Code as the agent: from the test adapter's 2xx to the fake model API receiving
    its first request, on a reused worktree; against the same CLI started by hand in the same worktree,
    resuming the same session (from its start to that request), alternating."""
    from tests.agent_clis import claude_binary

    # Started through a wrapper that notes when it runs, by the service and by hand: what lies before the
    # CLI's start is ours, what lies after is its own start-up (in the sandbox, against unconfined).
    # It notes into the records' folder, the one the bench's sandbox lets a run write (its HOME is its own).
    home = stack.work / "records"
    home.mkdir(parents=True, exist_ok=True)
    binary = str(home / "bench-claude")
    Path(binary).write_text(f'#!/bin/sh\ndate +%s.%N >> "{home}/bench-claude.log"\nexec {claude_binary()} "$@"\n')
    os.chmod(binary, 0o755)
    (await stack.api.patch(f"/api/codebases/{codebase_id}",
                           json={"agent": {"agent": "claude", "executable": binary}})).raise_for_status()
    conversation = f"real-cli-{uuid.uuid4().hex[:6]}"
    first = await start_conversation(stack, conversation, repository)
    pool = await asyncpg.connect(stack.database_url)
    ours, by_hand = [], []
    to_start, own_start, own_start_by_hand = [], [], []
    try:
        await run_ended(pool, first["agentRunId"])
        session, worktree = await pool.fetchrow(
            """SELECT r.session_id, e.working_path FROM agent_runs r JOIN isolation_environments e
               ON e.id = r.environment_id WHERE r.id = $1::uuid""", first["agentRunId"])
        for _ in range(runs):
            calls = len(stack.model.calls)
            response = await stack.api.post("/test/message", json={"conversationId": conversation, "message": "go"})
            answered = time.time()
            response.raise_for_status()
            handle = stack.temporal.get_workflow_handle_for(MessageWorkflow.run, response.json()["workflowId"])
            assert await run_ended(pool, (await handle.result()).run_id) == "done"
            ours.append((stack.model.calls[calls].at - answered) * 1000)
            to_start.append((_last_start(home) - answered) * 1000)
            own_start.append((stack.model.calls[calls].at - _last_start(home)) * 1000)

            calls = len(stack.model.calls)
            by_hand.append(await resumed_by_hand(stack, binary, await claude_folder(pool, stack, session), session,
                                                 worktree, b"go"))
            own_start_by_hand.append((stack.model.calls[calls].at - _last_start(home)) * 1000)
    finally:
        await pool.close()
    figure, baseline = Latency.of(ours), Latency.of(by_hand)
    above, ratio = figure.p50 - baseline.p50, figure.p50 / baseline.p50
    network = os.environ.get("SANDBOX_NETWORK", "egress")  # the service's, started with this environment
    return [Figure(f"real Claude Code hand-off (SANDBOX_NETWORK={network}), 2xx to its first model request",
                   str(figure), f"by hand: {baseline}", verdict(ratio <= 1.15),
                   {"latency": vars(figure), "baseline": vars(baseline), "above_p50": round(above, 1),
                    "ratio_p50": round(ratio, 3), "network": network}),
            Figure("  ratio to the CLI started by hand (p50)", f"x{ratio:.3f} (target <= 1.15)"),
            Figure("  above the CLI started by hand (p50)", f"{above:+.1f} ms"),
            Figure("  2xx to the CLI's start (ours)", str(Latency.of(to_start))),
            Figure("  its start to its request: ours, in the sandbox", str(Latency.of(own_start)),
                   f"by hand: {Latency.of(own_start_by_hand)}")]


async def claude_folder(pool: asyncpg.Connection, stack: Stack, session: str) -> Path:
    """The conversation's Claude Code folder, where its session lies (activities/runs/agents/configs.py)."""
    own = await pool.fetchval("SELECT id FROM agent_sessions WHERE agent_session_id = $1", session)
    return stack.work / "data" / "agent-sessions" / str(own) / "claude"


async def resumed_by_hand(stack: Stack, binary: str, folder: Path, session: str, worktree: str,
                          message: bytes) -> float:
    """Claude Code started by hand in the worktree, unconfined, resuming the session from its
    conversation's `folder`: milliseconds from its start to the fake model API receiving its first request."""
    from activities.runs.agents import claude
    from bench.stack import model_environment

    env = {**os.environ, **model_environment(stack.model), "CLAUDE_CONFIG_DIR": str(folder),
           "CLAUDE_CODE_MAX_RETRIES": "2"}
    argv = [binary, "-p", "--output-format", "stream-json", "--verbose", "--permission-mode", claude.UNCONFINED_MODE,
            "--resume", session]
    calls = len(stack.model.calls)
    began = time.time()
    process = await asyncio.create_subprocess_exec(*argv, cwd=worktree, env=env, stdin=asyncio.subprocess.PIPE,
                                                   stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
    await process.communicate(message)
    assert process.returncode == 0
    return (stack.model.calls[calls].at - began) * 1000


def _last_start(home: Path) -> float:
    return float((home / "bench-claude.log").read_text().split()[-1])
