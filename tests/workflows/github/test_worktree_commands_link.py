"""`/worktree link` end to end: a conversation moves into the worktree of an issue, a PR, another
thread or a task; the environment workflows learn who is attached; bad targets get the usage."""

from __future__ import annotations

from pathlib import Path

import pytest

from isolator.contracts.environment import EnvironmentState
from tests.chat_commands import command, cwd_of, environment_of, say_one
from tests.conftest import Stack
from tests.fakes.github_api import FakeGitHub
from tests.gitrepos import git, worktree_paths
from tests.platforms.github import (
    REPO,
    URL,
    deliver,
    issues_event,
    pull_request_event,
    resolution,
)
from workflows.chat import worktree_texts
from workflows.environment import EnvironmentWorkflow
from workflows.naming import thread_branch

MENTION = "@isolator please fix"


async def github_environment(stack: Stack, fake: FakeGitHub, event: str, payload: dict) -> str:
    response, delivery = await deliver(stack, event, payload)
    assert response.status_code == 202, response.text
    result = await resolution(stack, delivery)
    assert result.outcome == "created", result
    return result.environment_id


async def attached(stack: Stack, environment_id: str) -> list[str]:
    handle = stack.temporal.get_workflow_handle_for(EnvironmentWorkflow.run, f"environment:{environment_id}")
    state: EnvironmentState = await handle.query(EnvironmentWorkflow.state)
    return sorted(state.attached)


async def test_link_moves_a_conversation_between_issue_pr_thread_and_task_worktrees(
    stack: Stack, fake: FakeGitHub, repo: Path
) -> None:
    await stack.register(repo, url=URL)
    base = stack.settings.worktree_base.resolve() / "hello-world"  # named after the repository URL
    fake.add_issue(REPO, 42)
    issue = await github_environment(stack, fake, "issues", issues_event("opened", 42, MENTION))
    git("branch", "feature/x", cwd=repo)  # the PR's branch (the checkout has no origin to fetch it from)
    fake.add_pull(REPO, 99, "feature/x", "a" * 40)
    pull = await github_environment(stack, fake, "pull_request", pull_request_event("opened", 99, MENTION))
    thread = await stack.say("other-thread", "hello")
    await command(stack, "task-owner", "/worktree create my-feature")
    paths_before = sorted(worktree_paths(repo))
    assert len(paths_before) == 4

    targets = [
        ("issue-42", "issue-42", base / "issue-42", issue),
        ("pr-99", "feature/x", base / "feature-x", pull),
        (thread_branch("test:other-thread"), thread_branch("test:other-thread"), Path(thread["result"]["workingPath"]),
         thread["result"]["environmentId"]),
        ("task-my-feature", "task-my-feature", base / "task-my-feature", None),
    ]
    previous = None
    for target, branch, path, environment_id in targets:
        reply = await say_one(stack, "linker", f"/worktree link {target}")
        assert reply == f"This conversation now works in branch `{branch}` at `{path}`.", target
        row = await environment_of(stack, "linker")
        assert (row["branch_name"], row["working_path"]) == (branch, str(path))
        assert await cwd_of(stack, "linker") == str(path)
        assert "test:linker" in await attached(stack, str(row["id"]))
        if previous is not None:
            assert "test:linker" not in await attached(stack, previous), "detached from where it was"
        previous = str(row["id"])
        if environment_id is not None:
            assert str(row["id"]) == environment_id
        work = await stack.say("linker", "work here")
        assert (work["result"]["outcome"], work["result"]["workingPath"]) == ("reused", str(path))

    assert await attached(stack, issue) == [f"github:{REPO}#42"], "the issue keeps its own conversation"
    assert sorted(worktree_paths(repo)) == paths_before, "linking creates and removes nothing"
    assert await stack.db.fetchval("SELECT count(*) FROM isolation_environments") == 4

    again = await say_one(stack, "linker", "/worktree link task-my-feature")
    assert again == f"This conversation already works in branch `task-my-feature` at `{base / 'task-my-feature'}`."


@pytest.mark.parametrize("text", ["/worktree link", "/worktree link a b"])
async def test_link_without_one_target_gets_the_usage(stack: Stack, repo: Path, text: str) -> None:
    await stack.register(repo, url=URL)
    reply = await say_one(stack, "bad-link", text)
    assert reply == worktree_texts.LINK_USAGE
    assert "`/worktree link issue-42`" in reply and "`/worktree link task-my-feature`" in reply
    assert "<workflow>" not in reply
    assert await environment_of(stack, "bad-link") is None


@pytest.mark.parametrize("target", ["nope", "42"])
async def test_link_to_a_name_no_worktree_can_have_says_there_is_none(stack: Stack, repo: Path, target: str) -> None:
    await stack.register(repo, url=URL)
    reply = await say_one(stack, "bad-link-2", f"/worktree link {target}")
    assert reply.startswith(f"No worktree `{target}`: a worktree's name starts with `issue-`, `pr-`, `thread-` or "
                            "`task-`"), reply
    assert reply.endswith(worktree_texts.LINK_USAGE)
    assert await environment_of(stack, "bad-link-2") is None


@pytest.mark.parametrize("target", ["issue-77", "pr-1", "thread-00000000", "task-nothing"])
async def test_link_to_an_unknown_worktree_says_so_and_moves_nothing(stack: Stack, repo: Path, target: str) -> None:
    await stack.register(repo, url=URL)
    before = await stack.say("unknown-link", "hello")
    reply = await say_one(stack, "unknown-link", f"/worktree link {target}")
    assert reply == (
        f"No active worktree `{target}` in **hello-world**. See `/worktree list`.\n\n" + worktree_texts.LINK_USAGE
    )
    row = await environment_of(stack, "unknown-link")
    assert str(row["id"]) == before["result"]["environmentId"], "the conversation stays where it was"
    assert worktree_paths(repo) == [before["result"]["workingPath"]]


async def test_a_link_that_leaves_a_worktree_with_no_conversation_says_so(stack: Stack, repo: Path) -> None:
    await stack.register(repo, url=URL)
    own = (await stack.say("mover", "hello"))["result"]
    await command(stack, "task-owner", "/worktree create shared")
    reply = await say_one(stack, "mover", "/worktree link task-shared")
    left = own["branch"]
    assert reply.startswith("This conversation now works in branch `task-shared`"), reply
    assert f"No conversation works in `{left}` any more: `/worktree link {left}` comes back to it" in reply
    assert len(worktree_paths(repo)) == 2, "said, not removed"

    back = await say_one(stack, "mover", f"/worktree link {left}")
    assert "No conversation works in" not in back, "task-shared keeps task-owner's conversation"
