"""Nothing of the agent's branch decides what the service does outside the sandbox (issue 46): an agent
that commits its own `.isolator.toml` changes neither what is copied in from the main checkout, nor the
set-up, ports and teardown, even once its worktree is removed and restored from that branch. Real git,
PostgreSQL and Temporal, a small real agent (tests/agents/configurer.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from isolator.settings import Settings
from tests.agent_runs import finished_run, runs_idle
from tests.agents import command
from tests.chat_commands import environment_of, say_one
from tests.conftest import Stack
from tests.gitrepos import git
from tests.workflows.test_ready_to_work import commit_config, settled


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"agent_command_line": command("configurer")})


async def commits_its_own_config(stack: Stack, repo: Path, conversation: str, config: str) -> dict:
    """A worktree whose agent committed `config` as `.isolator.toml` on its branch."""
    await stack.register(repo)
    created = (await stack.say(conversation, config))["result"]
    assert (await finished_run(stack, created["agentRunId"]))["status"] == "done"
    assert git("show", f"{created['branch']}:.isolator.toml", cwd=repo) == config.strip()  # as the message came
    await runs_idle(stack, created["environmentId"])
    return created


async def test_the_agents_include_copies_nothing_from_the_main_checkout_on_restore(stack: Stack, repo: Path) -> None:
    (repo / ".env").write_text("SECRET=only-in-the-main-checkout\n")  # untracked, as a `.env` is
    created = await commits_its_own_config(stack, repo, "own-include", '[worktree]\ninclude = [".env"]\n')
    path, branch = Path(created["workingPath"]), created["branch"]
    assert not (path / ".env").exists()

    assert (await say_one(stack, "own-include", "/worktree remove")).startswith(f"Removed worktree `{path}`")
    restored = await say_one(stack, "own-include", f"/worktree restore {branch}")

    assert restored.startswith(f"Restored `{branch}` at `{path}`"), restored
    assert not (path / ".env").exists(), "the agent's own `include` copied the main checkout's `.env`"


async def test_set_up_ports_and_teardown_after_a_restore_are_the_default_branchs(
    stack: Stack, repo: Path, tmp_path: Path
) -> None:
    log = tmp_path / "commands.log"
    commit_config(repo, f'[setup]\ncommands = ["echo main-setup $ISOLATOR_PORTS >> {log}"]\n'
                        f'[teardown]\ncommands = ["echo main-teardown >> {log}"]\n[worktree]\nports = 2\n')
    created = await commits_its_own_config(
        stack, repo, "own-setup", f'[setup]\ncommands = ["echo agent-setup >> {log}"]\n'
                                  f'[teardown]\ncommands = ["echo agent-teardown >> {log}"]\n[worktree]\nports = 7\n')
    branch = created["branch"]
    assert (await say_one(stack, "own-setup", "/worktree remove")).startswith("Removed worktree")

    assert (await say_one(stack, "own-setup", f"/worktree restore {branch}")).startswith(f"Restored `{branch}`")
    restored = await environment_of(stack, "own-setup")
    assert restored is not None and await settled(stack, str(restored["id"])) == "ready"
    assert (await say_one(stack, "own-setup", "/worktree remove")).startswith("Removed worktree")

    lines = log.read_text().splitlines()
    assert [line.split()[0] for line in lines] == ["main-setup", "main-teardown", "main-setup", "main-teardown"], lines
    first, last = (int(port) for port in lines[2].split()[1].split("-"))
    assert last - first + 1 == 2, "the block of ports is the default branch's size"
