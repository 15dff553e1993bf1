"""A nested repository never stops a worktree: one with no commit (an agent's `git init -q x`) is left
out of what the service records, commits and archives, and the reply says so; the next run works, and
a forced removal removes. Real git, PostgreSQL and Temporal, a small real agent (tests/agents/nester.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from isolator.settings import Settings
from tests.agent_runs import finished_run, replies_when, runs_idle
from tests.agents import command
from tests.archives import archive_git
from tests.chat_commands import say_one
from tests.conftest import Stack

NOTE = "`x/` is a git repository with no commit: left out of the commit."


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"agent_command_line": command("nester")})


async def test_an_empty_nested_repository_is_left_out_and_the_worktree_goes_on(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    created = (await stack.say("nest-1", "nest x"))["result"]
    path, branch = Path(created["workingPath"]), created["branch"]
    assert (await finished_run(stack, created["agentRunId"]))["status"] == "done"
    replies = await replies_when(stack, "nest-1", lambda texts: any("— Done in" in text for text in texts))
    assert NOTE in replies[-1], replies
    await runs_idle(stack, created["environmentId"])

    again = (await stack.say("nest-1", "write a note"))["result"]
    run = await finished_run(stack, again["agentRunId"])

    assert run["status"] == "done", run
    assert run["changed_files"] == ["note-1.txt"]
    replies = await replies_when(stack, "nest-1", lambda texts: sum("— Done in" in text for text in texts) == 2)
    assert NOTE in replies[-1], replies
    await runs_idle(stack, created["environmentId"])

    removed = await say_one(stack, "nest-1", "/worktree remove --force")

    assert removed.startswith(f"Removed worktree `{path}` (branch `{branch}`)."), removed
    assert "`x/` is a git repository with no commit: left out of the archive." in removed
    assert not path.exists()
    archived = archive_git(repo, "ls-tree", "--name-only", f"refs/isolator/archive/{created['environmentId']}")
    assert "note-1.txt" in archived.split() and "x" not in archived.split()
