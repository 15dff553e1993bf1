"""A reply the platform refuses for good (a locked issue, a token without rights) is logged as failed and
changes nothing else: the message keeps its outcome, the environment workflow keeps its worktree."""

from __future__ import annotations

from pathlib import Path

from temporalio.client import WorkflowExecutionStatus

from isolator.contracts.environment import DestroyRequest
from tests.conftest import Stack
from tests.fakes.github_api import Comment, FakeGitHub
from tests.gitrepos import first_replies, worktree_paths
from tests.platforms.github import REPO, URL, deliver, issues_event, resolution
from tests.platforms.github_issues import (
    close,
    environment,
    open_issue,
    settled_state,
    status_of,
    until,
)
from workflows.chat.agent_texts import no_agent
from workflows.environment import EnvironmentWorkflow

REFUSED = 403  # "Resource not accessible by integration": final, never retried


async def outbound_status(stack: Stack, text: str) -> str:
    return await stack.db.fetchval("SELECT status FROM outbound_messages WHERE body LIKE $1", f"%{text}%")


async def test_a_refused_first_reply_leaves_the_worktree_created(stack: Stack, fake: FakeGitHub, repo: Path) -> None:
    await stack.register(repo, url=URL)
    fake.add_issue(REPO, 12)
    fake.fail("comment", REFUSED)
    response, delivery = await deliver(stack, "issues", issues_event("opened", 12, "@isolator please fix"))
    assert response.status_code == 202, response.text

    result = await resolution(stack, delivery)
    assert (result.outcome, result.branch) == ("created", "issue-12")
    # The worktree's line, then (no agent being configured) the notice: no 'failed' reply about the reply.
    assert result.replies == first_replies("issue-12", repo)
    assert len(worktree_paths(repo)) == 1
    assert await stack.db.fetchval("SELECT count(*) FROM isolation_environments WHERE status = 'active'") == 1
    assert await outbound_status(stack, "Working in") == "failed"
    # Only the first comment was refused: the notice, the next, went through.
    assert await outbound_status(stack, "No coding agent answers") == "sent"
    assert fake.calls("comment") == 2 and fake.comments == [Comment(REPO, 12, no_agent())]


async def test_a_refusal_the_platform_will_not_take_leaves_the_environment_waiting(
    stack: Stack, fake: FakeGitHub, repo: Path
) -> None:
    """GitHub refusing the comment (a locked issue, a token without rights) must not end the workflow
    that still owns the worktree: once the worktree is repaired, a forced destroy still removes it."""
    await stack.register(repo, url=URL)
    environment_id = await open_issue(stack, fake, 11)
    (path,) = worktree_paths(repo)
    dot_git = Path(path) / ".git"
    pointer = dot_git.read_text()
    dot_git.write_text("gitdir: /nowhere\n")  # git cannot read it: it is neither archived nor removed
    fake.fail("comment", 403)

    await close(stack, "issues", issues_event("closed", 11))
    await until(lambda: fake.calls("comment") == 2)  # the "Working in" comment, then the refused one
    state = await settled_state(stack, environment_id)
    assert state.status == "removal_refused"
    assert (await environment(stack, environment_id).describe()).status == WorkflowExecutionStatus.RUNNING
    refused = await stack.db.fetchval("SELECT status FROM outbound_messages WHERE body LIKE '%git cannot read%'")
    assert refused == "failed", "the log shows the reply never went out"
    dot_git.write_text(pointer)

    await environment(stack, environment_id).signal(
        EnvironmentWorkflow.destroy, DestroyRequest(force=True, reason="test", key="force-1")
    )
    assert (await environment(stack, environment_id).result()).outcome == "removed"
    assert not Path(path).exists() and await status_of(stack, environment_id) == "destroyed"

