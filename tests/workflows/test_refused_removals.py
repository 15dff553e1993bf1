"""A refused removal (issue 47, item 8): a person's ends there, and nothing fires later; the service's
own (its conversation closed) is shown in `/status`, cancelled by the next message in the conversation,
and said when it finally goes through. Real git, PostgreSQL and Temporal through `/test/message`; the
hour between retries is shortened where a test waits for one."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta
from pathlib import Path

import pytest

from tests.agent_runs import finished_run, replies_when
from tests.agents import command
from tests.chat_commands import say_one, task_path
from tests.conftest import Stack
from tests.gitrepos import git, worktree_paths
from tests.removals import close_unreadable, settled, state_of
from workflows import environment_removal
from workflows.chat import worktree_texts

QUICK_RETRY = timedelta(seconds=0.5)


async def row_status(stack: Stack, environment_id: str) -> str:
    return await stack.db.fetchval("SELECT status FROM isolation_environments WHERE id = $1",
                                   uuid.UUID(environment_id))


async def test_a_refused_remove_ends_there_and_the_worktree_stays_once_committed(
        stack: Stack, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(environment_removal, "RETRY_REFUSED_REMOVAL", QUICK_RETRY)
    await stack.register(repo)
    await say_one(stack, "person-1", "/worktree create keep")
    path = task_path(stack, "keep")
    (path / "notes.txt").write_text("half-done work\n")
    environment_id = (await stack.db.fetchval("SELECT id FROM isolation_environments WHERE branch_name = 'task-keep'"))

    refused = await say_one(stack, "person-1", "/worktree remove")
    assert "has uncommitted changes, so it was not removed" in refused
    assert "every hour" not in refused, "nothing is tried again"
    state = await settled(stack, str(environment_id))
    assert (state.status, state.refusal, state.retrying) == ("active", None, None)

    git("add", "notes.txt", cwd=path)  # the advice followed: the work committed, and worked on further
    git("commit", "-q", "-m", "half-done work", cwd=path)
    await asyncio.sleep(QUICK_RETRY.total_seconds() * 6)
    assert worktree_paths(repo) == [str(path)] and (path / "notes.txt").exists()
    assert await row_status(stack, str(environment_id)) == "active"
    assert "Removal:" not in await say_one(stack, "person-1", "/status")


async def test_the_services_refused_removal_is_shown_and_a_message_cancels_it(
        stack: Stack, repo: Path, tmp_path: Path) -> None:
    await stack.register(repo)
    created = (await stack.say("closed-1", "hello"))["result"]
    pointer = await close_unreadable(stack, "closed-1", created)

    told = (await stack.replies("closed-1"))[-1]
    assert told.startswith("git cannot read") and told.endswith(worktree_texts.RETRIED_HOURLY), told
    status = await say_one(stack, "closed-1", "/status")
    assert "Removal: tried again every hour, refused so far: git cannot read" in status, status
    assert status.count("A message here cancels it.") == 1
    assert (await state_of(stack, created["environmentId"])).status == "removal_refused", "a command cancels nothing"

    Path(created["workingPath"], ".git").write_text(pointer)
    stack.settings.agent_command_line = command("recorder", str(tmp_path / "runs.txt"), "0")
    again = (await stack.say("closed-1", "back to work"))["result"]
    assert (again["outcome"], again["environmentId"]) == ("reused", created["environmentId"])
    state = await state_of(stack, created["environmentId"])
    assert (state.status, state.retrying, state.refusal) == ("active", None, None)
    await finished_run(stack, again["agentRunId"])  # its answer comes before the `/status` asked below
    await replies_when(stack, "closed-1", lambda texts: "— Done" in texts[-1])
    assert "Removal:" not in await say_one(stack, "closed-1", "/status")
    assert worktree_paths(repo) == [created["workingPath"]]


async def test_the_services_refused_removal_says_so_when_it_goes_through_at_last(
        stack: Stack, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(environment_removal, "RETRY_REFUSED_REMOVAL", QUICK_RETRY)
    await stack.register(repo)
    created = (await stack.say("closed-2", "hello"))["result"]
    pointer = await close_unreadable(stack, "closed-2", created)

    Path(created["workingPath"], ".git").write_text(pointer)  # repaired by hand
    await stack.temporal.get_workflow_handle(f"environment:{created['environmentId']}").result()

    assert await row_status(stack, created["environmentId"]) == "destroyed"
    assert worktree_paths(repo) == []
    last = (await stack.replies("closed-2"))[-1]
    assert last.startswith(f"The removal of `{created['branch']}`, refused before and tried again every hour, "
                           f"went through. Removed worktree `{created['workingPath']}`"), last
    assert f"`/worktree restore {created['branch']}`" in last
