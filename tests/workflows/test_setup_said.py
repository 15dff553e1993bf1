"""The set-up says what it did where the user looks (issue 31): `/status` does not call a set-up that had
nothing to do "ready", shows what a successful one printed and a `.isolator.toml` committed but not
pushed (which the creation reply says too), and an agent run after a failed set-up says so, once;
`/worktree setup` with nothing configured says so, and where a set-up goes (issue 47, item 22)."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from tests.agent_runs import finished_run
from tests.agents import command as agent_command
from tests.chat_commands import say_one
from tests.conftest import Stack
from tests.gitrepos import clone_with_origin, git
from workflows.chat import agent_texts
from workflows.chat.setup_texts import NOTHING_TO_SET_UP


async def settled(stack: Stack, environment_id: str, seconds: float = 60) -> str:
    for _ in range(int(seconds * 20)):
        state = await stack.db.fetchval("SELECT setup_state FROM isolation_environments WHERE id = $1",
                                        uuid.UUID(environment_id))
        if state not in ("none", "running"):
            return state
        await asyncio.sleep(0.05)
    raise AssertionError(f"the set-up of {environment_id} did not end")


def push_config(checkout: Path, text: str, push: bool = True) -> None:
    (checkout / ".isolator.toml").write_text(text)
    git("add", ".isolator.toml", cwd=checkout)
    git("commit", "-q", "-m", "set-up", cwd=checkout)
    if push:
        git("push", "-q", "origin", "main", cwd=checkout)


async def test_status_says_there_is_nothing_to_set_up_without_a_config(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    created = (await stack.say("said-1", "hello"))["result"]
    assert await settled(stack, created["environmentId"]) == "ready"
    status = await say_one(stack, "said-1", "/status")
    assert f"Set-up: {NOTHING_TO_SET_UP}" in status and "Set-up: ready" not in status, status


async def test_status_shows_what_a_successful_set_up_printed(stack: Stack, tmp_path: Path) -> None:
    _, checkout = clone_with_origin(tmp_path)
    push_config(checkout, '[setup]\ncommands = ["echo installing", "echo all 12 packages installed"]\n')
    await stack.register(checkout)
    created = (await stack.say("said-2", "hello"))["result"]
    assert await settled(stack, created["environmentId"]) == "ready"
    status = await say_one(stack, "said-2", "/status")
    assert "Set-up: ready\nIts last lines:\n```\nall 12 packages installed\n```" in status, status


async def test_a_config_committed_but_not_pushed_is_said_at_creation_and_in_status(stack: Stack, tmp_path: Path) -> None:
    _, checkout = clone_with_origin(tmp_path)
    push_config(checkout, '[setup]\ncommands = ["echo never run"]\n', push=False)
    await stack.register(checkout)
    created = (await stack.say("said-3", "hello"))["result"]
    unpushed = ("`.isolator.toml` is committed on the local `main` but not on origin's, so it is not used: "
                "push it to origin's `main`.")
    assert created["replies"][0].endswith("\n" + unpushed), created["replies"]
    await settled(stack, created["environmentId"])
    assert unpushed in await say_one(stack, "said-3", "/status")


async def test_an_agent_run_after_a_failed_set_up_says_so_once(stack: Stack, tmp_path: Path) -> None:
    _, checkout = clone_with_origin(tmp_path)
    push_config(checkout, '[setup]\ncommands = ["echo broken; exit 3"]\n')
    stack.settings.agent_command_line = agent_command("reporter")
    await stack.register(checkout)
    created = (await stack.say("said-4", "hello"))["result"]
    assert await settled(stack, created["environmentId"]) == "failed"
    await finished_run(stack, created["agentRunId"])

    again = (await stack.say("said-4", "try anyway"))["result"]
    assert again["replies"][0] == agent_texts.after_failed_setup(created["branch"]), again
    await finished_run(stack, again["agentRunId"])
    third = (await stack.say("said-4", "and again"))["result"]
    assert agent_texts.after_failed_setup(created["branch"]) not in third["replies"], "said once"
    await finished_run(stack, third["agentRunId"])


async def test_setup_with_no_isolator_toml_says_none_is_configured_and_where_it_goes(
        stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    branch = (await stack.say("setup-none", "hello"))["result"]["branch"]

    reply = await say_one(stack, "setup-none", "/worktree setup")

    assert "it is ready" not in reply and "ran again" not in reply, reply
    assert reply.startswith(f"The set-up of `{branch}` has nothing to run: none is configured, as the default "
                            "branch has no `.isolator.toml`."), reply
    assert "`.isolator.toml` at the repository's root, committed on the default branch, under `[setup]`" in reply
