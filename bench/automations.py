"""Automations (docs/automations.md): a scheduled firing's start to its agent's process start, against a
chat message's create path to the same agent of the same codebase, alternating; and the reuse path with
no automation defined against 100 of them (Temporal Schedules of `@every 1h`), in mirrored blocks.

Each firing is started by its Temporal Schedule (triggered: the same action a firing time takes) and
goes, as a scheduled one does, through the firing workflow, a fresh conversation and a fresh worktree.
The agent is the hand-off case's: it records its run id and the clock as soon as a shell can.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import datetime
from pathlib import Path

import asyncpg
from temporalio.client import ScheduleActionExecutionStartWorkflow, ScheduleHandle

from activities.automations.schedules import schedule_id
from bench.agents import NO_OP, run_ended, set_agent, started_at
from bench.figures import Figure, Latency, timed, verdict
from bench.messages import say, start_conversation
from bench.stack import Stack
from isolator.contracts.message import message_workflow_id
from workflows.message import MessageWorkflow

DEFINED = 100  # automations defined for the reuse comparison
# The reuse comparison's blocks, mirrored so that each side meets the machine's drift alike.
ORDER = ("none", "defined", "defined", "none")
ROUNDS = 4
# Messages sent and not counted after the automations are made or removed: Temporal's own work on 100
# new or deleted Schedules (their scheduler workflows) settles first.
SETTLING = 10


async def firing_against_chat(stack: Stack, repository: Path, runs: int) -> list[Figure]:
    """Firing workflow's start to the agent's process start, against the test adapter's message (sent) to
    the agent's process start in a new conversation (its create path); beside it, the chat message from its
    own workflow's start, as the firing is measured."""
    log = stack.work / "records" / "automation-agent-started.log"  # SANDBOX_WRITABLE_PATHS of the bench's stack
    log.parent.mkdir(parents=True, exist_ok=True)
    codebase = (await stack.api.post("/api/codebases", json={"path": str(repository)})).raise_for_status().json()
    await set_agent(stack, codebase["id"], ["sh", "-c", NO_OP, str(log)])
    name = f"bench-firing-{uuid.uuid4().hex[:6]}"
    (await stack.api.post("/api/automations", json={
        "name": name, "codebase": codebase["name"], "schedule": "@every 1h", "prompt": "go",
        "report": f"test:{name}"})).raise_for_status()
    schedule = stack.temporal.get_schedule_handle(schedule_id(name))
    pool = await asyncpg.connect(stack.database_url)
    firings, before_message, after_message, chats, chats_from_workflow = [], [], [], [], []
    try:
        for index in range(runs + 1):  # the first pair warms both paths up and is not counted
            firing, own_steps, its_message = await _scheduled_firing(stack, pool, schedule, log)
            chat, chat_from_workflow = await _chat_create(stack, pool, repository, log, f"{name}-chat-{index}")
            if index:
                firings.append(firing)
                before_message.append(own_steps)
                after_message.append(its_message)
                chats.append(chat)
                chats_from_workflow.append(chat_from_workflow)
    finally:
        await pool.close()
        (await stack.api.delete(f"/api/automations/{name}")).raise_for_status()
    figure, chat, from_workflow = Latency.of(firings), Latency.of(chats), Latency.of(chats_from_workflow)
    own, message = Latency.of(before_message), Latency.of(after_message)
    ratio = figure.p50 / chat.p50
    return [
        Figure("automation firing, its workflow's start to the agent running", str(figure),
               f"chat create, message to the agent running: {chat}", verdict(ratio <= 1.1),
               {"latency": vars(figure), "baseline": vars(chat), "ratio_p50": round(ratio, 3),
                "chat_from_its_workflow": vars(from_workflow), "firing_before_its_message": vars(own),
                "firing_message_to_agent": vars(message)}),
        Figure("  ratio to the chat message's create path (p50)", f"x{ratio:.3f} (target <= 1.1)"),
        Figure("  ratio to the chat create from its workflow's start (p50)", f"x{figure.p50 / from_workflow.p50:.3f}",
               f"chat create, its workflow's start to the agent running: {from_workflow}"),
        Figure("  the firing's own steps, its start to its message workflow's", str(own)),
        Figure("  the firing's message workflow's start to the agent running", str(message),
               f"the chat message's: {from_workflow}"),
    ]


async def _scheduled_firing(stack: Stack, pool: asyncpg.Connection, schedule: ScheduleHandle,
                            log: Path) -> tuple[float, float, float]:
    """One firing by its schedule, until it has ended: milliseconds from its workflow's start to its agent's,
    to the start of the message workflow it hands the prompt to (what it does before a chat message's start),
    and from that start to its agent's."""
    before = (await schedule.describe()).info.num_actions
    await schedule.trigger()
    while (described := await schedule.describe()).info.num_actions <= before:
        await asyncio.sleep(0.05)
    action = described.info.recent_actions[-1].action
    assert isinstance(action, ScheduleActionExecutionStartWorkflow)
    firing = stack.temporal.get_workflow_handle(action.workflow_id)
    await firing.result()
    start = (await firing.describe()).start_time
    run_id = await pool.fetchval("SELECT run_id::text FROM automation_firings WHERE workflow_id = $1", action.workflow_id)
    assert run_id is not None, f"firing {action.workflow_id} ran no agent"
    assert await run_ended(pool, run_id) == "done"
    message = message_workflow_id("automation", action.workflow_id.removeprefix("automation:"))
    message_start = (await stack.temporal.get_workflow_handle(message).describe()).start_time
    agent = started_at(log, run_id)
    return ((agent - start.timestamp()) * 1000, (message_start - start).total_seconds() * 1000,
            (agent - message_start.timestamp()) * 1000)


async def _chat_create(stack: Stack, pool: asyncpg.Connection, repository: Path, log: Path,
                       conversation: str) -> tuple[float, float]:
    """A new conversation's first message (after its `/clone`): milliseconds from the message sent, and from
    its workflow's start, to the agent's start."""
    await say(stack, conversation, f"/clone {repository}")
    sent = time.time()
    response = await stack.api.post("/test/message", json={"conversationId": conversation, "message": "go"})
    message = stack.temporal.get_workflow_handle_for(MessageWorkflow.run, response.raise_for_status().json()["workflowId"])
    result = await message.result()
    assert result.outcome == "created" and result.run_id, result
    assert await run_ended(pool, result.run_id) == "done"
    agent = started_at(log, result.run_id)
    start: datetime = (await message.describe()).start_time
    return (agent - sent) * 1000, (agent - start.timestamp()) * 1000


async def reuse_with_automations(stack: Stack, repository: Path, runs: int) -> list[Figure]:
    """The reuse path's latency with none and with DEFINED automations (each with its Temporal Schedule),
    in blocks taken in the order ORDER, ROUNDS times, the automations made and removed between them
    through the API."""
    codebase = (await stack.api.post("/api/codebases", json={"path": str(repository)})).raise_for_status().json()
    conversation = f"automations-reuse-{uuid.uuid4().hex[:6]}"
    await start_conversation(stack, conversation, repository)
    per_block = max(5, runs // (len(ORDER) * ROUNDS))
    samples: dict[str, list[float]] = {"none": [], "defined": []}
    defined: list[str] = []
    for round_number in range(ROUNDS):
        for side in ORDER:
            if side == "defined" and not defined:
                defined = await _define(stack, codebase["name"], f"bench-defined-{round_number}")
            elif side == "none" and defined:
                defined = await _remove(stack, defined)
            samples[side] += await _block(stack, conversation, per_block)
    await _remove(stack, defined)
    figure, baseline = Latency.of(samples["defined"]), Latency.of(samples["none"])
    above = figure.p50 - baseline.p50
    return [Figure(f"reuse with {DEFINED} automations defined", str(figure), f"with none: {baseline}",
                   verdict(above <= 1.0),
                   {"latency": vars(figure), "baseline": vars(baseline), "above_p50": round(above, 2)}),
            Figure("  above none defined (p50)", f"{above:+.2f} ms (target <= +1)")]


async def _define(stack: Stack, codebase: str, prefix: str) -> list[str]:
    """DEFINED automations of `@every 1h`; each Schedule described once made, so that Temporal has started
    every one's scheduler before the block."""
    names = [f"{prefix}-{index}" for index in range(DEFINED)]
    for name in names:
        (await stack.api.post("/api/automations", json={
            "name": name, "codebase": codebase, "schedule": "@every 1h", "prompt": "look at the code",
            "report": f"test:{name}"})).raise_for_status()
    for name in names:
        await stack.temporal.get_schedule_handle(schedule_id(name)).describe()
    return names


async def _remove(stack: Stack, names: list[str]) -> list[str]:
    for name in names:
        (await stack.api.delete(f"/api/automations/{name}")).raise_for_status()
    return []


async def _block(stack: Stack, conversation: str, samples: int) -> list[float]:
    for _ in range(SETTLING):
        await say(stack, conversation)
    return [await timed(lambda: say(stack, conversation)) for _ in range(samples)]
