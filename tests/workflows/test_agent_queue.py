"""One run at a time per worktree: runs queue in the environment's workflow in arrival order,
whichever attached conversation sent them; `/stop`, timeouts, closes, the cleanup and forced
removals meet the runs as a user would expect. Real git, PostgreSQL and Temporal."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest

from api.dispatch import start_message
from isolator.settings import Settings
from tests.agent_runs import alive, finished_run, replies_when, run_of, spawned
from tests.agents import command
from tests.conftest import Stack


@pytest.fixture
def settings(settings: Settings, tmp_path: Path) -> Settings:
    return settings.model_copy(update={"agent_command_line": command("recorder", str(tmp_path / "runs.log"), "1.5"),
                                       "agent_max_concurrent": 2})


async def running(stack: Stack, run_id: str, seconds: float = 30) -> None:
    for _ in range(int(seconds * 20)):
        if (await run_of(stack, run_id))["status"] == "running":
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"run {run_id} did not start")


async def test_two_conversations_sharing_a_worktree_run_one_at_a_time_in_order(
    stack: Stack, repo: Path, tmp_path: Path
) -> None:
    await stack.register(repo)
    first = (await stack.say("queue-a", "first"))["result"]
    await finished_run(stack, first["agentRunId"])
    linked = (await stack.say("queue-b", f"/worktree link {first['branch']}"))["result"]
    assert linked["outcome"] == "command"
    (tmp_path / "runs.log").unlink()

    # Both at the same moment, then a third while they run.
    a, b = await asyncio.gather(stack.say("queue-a", "from-a"), stack.say("queue-b", "from-b"))
    c = await stack.say("queue-a", "from-a-again")
    runs = [a["result"]["agentRunId"], b["result"]["agentRunId"], c["result"]["agentRunId"]]
    assert len(set(runs)) == 3 and all(runs)
    assert c["result"]["replies"] and c["result"]["replies"][0].startswith("Queued: ") \
        and "2 runs come first" in c["result"]["replies"][0]
    for run in runs:
        assert (await finished_run(stack, run))["status"] == "done"

    events = [line.split() for line in (tmp_path / "runs.log").read_text().splitlines()]
    assert [kind for kind, _, _ in events] == ["start", "end"] * 3, "no run overlapped another"
    order = [message for kind, message, _ in events if kind == "start"]
    assert order[2] == "from-a-again" and set(order[:2]) == {"from-a", "from-b"}
    times = [float(moment) for _, _, moment in events]
    assert times == sorted(times)


async def test_stop_ends_the_run_and_its_whole_process_group_and_drops_the_queue(
    stack: Stack, repo: Path, tmp_path: Path
) -> None:
    pids = tmp_path / "pids"
    stack.settings.agent_command_line = command("spawner", str(pids))
    await stack.register(repo)
    first = (await stack.say("stop-1", "work forever"))["result"]
    await running(stack, first["agentRunId"])
    for _ in range(200):
        if pids.exists() and pids.read_text().endswith("\n"):
            break
        await asyncio.sleep(0.05)
    agent, child = spawned(pids)
    assert alive(agent) and alive(child)
    queued = (await stack.say("stop-1", "then this"))["result"]
    assert "1 run come" in queued["replies"][0]

    # The log during the run: what the agent has written to standard error so far.
    for _ in range(100):
        log = (await stack.api.get(f"/api/runs/{first['agentRunId']}/log")).text
        if log:
            break
        await asyncio.sleep(0.05)
    assert log == f"started child {pids.read_text().split()[1]}\n"

    status = (await stack.say("stop-1", "/status"))["result"]["replies"][0]
    assert 'Agent: running for' in status and '"work forever"' in status and '"then this"' in status

    stopped = (await stack.say("stop-1", "/stop"))["result"]["replies"]
    assert stopped == ['Stopped the agent\'s run on "work forever" and dropped 1 queued message.']
    assert not alive(agent) and not alive(child), "nothing of the run's process group is left"
    assert (await finished_run(stack, first["agentRunId"]))["status"] == "stopped"
    assert (await run_of(stack, queued["agentRunId"]))["status"] == "dropped"
    replies = await replies_when(stack, "stop-1", lambda texts: any("— Stopped after" in text for text in texts))
    assert any(text.startswith("working on it") and "— Stopped after" in text for text in replies)

    nothing = (await stack.say("stop-1", "/stop"))["result"]["replies"]
    assert nothing == ["Nothing to stop: the agent is not working on a message from this conversation."]


async def test_a_run_past_its_timeout_is_stopped(stack: Stack, repo: Path, tmp_path: Path) -> None:
    stack.settings.agent_command_line = command("spawner", str(tmp_path / "pids"))
    stack.settings.agent_timeout_minutes = 0.05  # 3 s
    await stack.register(repo)
    created = (await stack.say("timeout-1", "slow"))["result"]
    for _ in range(200):
        if (tmp_path / "pids").is_file() and (tmp_path / "pids").read_text().endswith("\n"):
            break
        await asyncio.sleep(0.05)
    agent, child = spawned(tmp_path / "pids")
    run = await finished_run(stack, created["agentRunId"])
    assert run["status"] == "timed_out"
    assert not alive(agent) and not alive(child)
    replies = await replies_when(stack, "timeout-1", lambda texts: any("Timed out after" in text for text in texts))
    assert any("AGENT_TIMEOUT_MINUTES" in text for text in replies)


async def test_a_close_during_a_run_removes_the_worktree_after_the_run(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    created = (await stack.say("close-1", "long job"))["result"]
    await running(stack, created["agentRunId"])
    # What a platform's close event does (only GitHub sends them; the test adapter has none).
    closing = await start_message(stack.settings, stack.temporal, platform="test", conversation_id="close-1",
                                  text="", message_key="close-1:closed", kind="closed")
    assert (await closing.result()).outcome == "closed"
    assert Path(created["workingPath"]).is_dir(), "not removed under the run"
    assert (await finished_run(stack, created["agentRunId"]))["status"] == "done"
    for _ in range(200):
        if not Path(created["workingPath"]).exists():
            break
        await asyncio.sleep(0.05)
    assert not Path(created["workingPath"]).exists()


async def test_the_cleanup_skips_a_worktree_whose_agent_runs_and_force_stops_it_first(
    stack: Stack, repo: Path, tmp_path: Path
) -> None:
    stack.settings.agent_command_line = command("spawner", str(tmp_path / "pids"))  # runs until stopped
    await stack.register(repo)
    created = (await stack.say("busy-1", "long job"))["result"]
    await running(stack, created["agentRunId"])
    await stack.db.execute("UPDATE conversations SET last_activity_at = now() - interval '30 days'")
    cleanup = (await stack.say("busy-2", "/worktree cleanup stale"))["result"]["replies"][0]
    assert "agent running" in cleanup.lower() and created["branch"] in cleanup
    assert Path(created["workingPath"]).is_dir()

    plain = (await stack.say("busy-1", "/worktree remove"))["result"]["replies"][0]
    assert plain.startswith(f"Agent running in `{created['branch']}`")
    forced = (await stack.say("busy-1", "/worktree remove --force"))["result"]["replies"][0]
    assert "removed" in forced.lower()
    assert (await run_of(stack, created["agentRunId"]))["status"] == "stopped"
    assert not Path(created["workingPath"]).exists()
    environment = await stack.db.fetchval("SELECT status FROM isolation_environments WHERE id = $1",
                                          uuid.UUID(created["environmentId"]))
    assert environment == "destroyed"


async def test_no_more_runs_at_once_than_agent_max_concurrent_and_the_rest_wait(
    stack: Stack, repo: Path, tmp_path: Path
) -> None:
    """Four conversations, four worktrees, and AGENT_MAX_CONCURRENT=2: never more than two runs at once."""
    await stack.register(repo)
    conversations = [f"slots-{number}" for number in range(4)]
    stack.settings.agent_command_line = ""  # the worktrees first, without runs
    for conversation in conversations:
        await stack.say(conversation, "make the worktree")
    log = tmp_path / "slots.log"
    stack.settings.agent_command_line = command("recorder", str(log), "1")
    sent = await asyncio.gather(*(stack.say(conversation, conversation) for conversation in conversations))
    for answer in sent:
        assert (await finished_run(stack, answer["result"]["agentRunId"]))["status"] == "done"
    events = sorted((float(moment), kind) for kind, _, moment in (line.split() for line in log.read_text().splitlines()))
    running, most = 0, 0
    for _, kind in events:
        running += 1 if kind == "start" else -1
        most = max(most, running)
    assert most == 2, events
