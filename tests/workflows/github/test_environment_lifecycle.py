"""Environment workflows end to end: close events remove worktrees, shared ones wait for every
conversation, dirty work and unpushed commits survive, signals are idempotent."""

from __future__ import annotations

from pathlib import Path

from temporalio.client import WorkflowExecutionStatus

from isolator.contracts.environment import (
    ConversationSignal,
)
from isolator.contracts.worktree import RemovalReport
from tests.archives import archive_git
from tests.conftest import Stack
from tests.fakes.github_api import FakeGitHub
from tests.gitrepos import branches, git, worktree_paths
from tests.platforms.github import (
    REPO,
    URL,
    deliver,
    issues_event,
    pull_request_event,
    resolution,
)
from tests.platforms.github_issues import (
    MENTION,
    close,
    environment,
    file_in_archive,
    open_issue,
    settled_state,
    status_of,
)
from workflows.environment import EnvironmentWorkflow


async def test_closing_an_issue_removes_its_worktree(stack: Stack, fake: FakeGitHub, repo: Path) -> None:
    await stack.register(repo, url=URL)
    environment_id = await open_issue(stack, fake, 7)
    (path,) = worktree_paths(repo)
    assert (await environment(stack, environment_id).query(EnvironmentWorkflow.state)).attached == [f"github:{REPO}#7"]

    await close(stack, "issues", issues_event("closed", 7))
    report = await environment(stack, environment_id).result()
    assert report.outcome == "removed"
    assert report.branch_outcome == "archived", "the branch stays with the worktree's archive"
    assert report.archive_refs == [f"refs/isolator/archive/{environment_id}"]
    assert not Path(path).exists() and worktree_paths(repo) == []
    assert "issue-7" in branches(repo)
    assert await status_of(stack, environment_id) == "destroyed"
    assert await stack.db.fetchval("SELECT environment_id FROM conversations") is None
    description = await environment(stack, environment_id).describe()
    assert description.status == WorkflowExecutionStatus.COMPLETED


async def test_a_shared_worktree_goes_only_when_the_issue_and_the_pr_are_both_closed(
    stack: Stack, fake: FakeGitHub, repo: Path
) -> None:
    await stack.register(repo, url=URL)
    environment_id = await open_issue(stack, fake, 42)
    fake.add_pull(REPO, 43, "feature/x", "a" * 40, closes=(42,))
    response, delivery = await deliver(stack, "pull_request", pull_request_event("opened", 43, f"{MENTION}, fixes #42"))
    assert response.status_code == 202, response.text
    shared = await resolution(stack, delivery)
    assert (shared.outcome, shared.environment_id) == ("shared", environment_id)
    state = await environment(stack, environment_id).query(EnvironmentWorkflow.state)
    assert sorted(state.attached) == [f"github:{REPO}#42", f"github:{REPO}#43"]

    await close(stack, "issues", issues_event("closed", 42))
    state = await settled_state(stack, environment_id)
    assert (state.status, state.attached) == ("active", [f"github:{REPO}#43"])
    assert len(worktree_paths(repo)) == 1 and await status_of(stack, environment_id) == "active"

    await close(stack, "pull_request", pull_request_event("closed", 43))
    assert (await environment(stack, environment_id).result()).outcome == "removed"
    assert worktree_paths(repo) == [] and await status_of(stack, environment_id) == "destroyed"


async def test_a_dirty_worktree_goes_with_the_close_into_its_archive(
    stack: Stack, fake: FakeGitHub, repo: Path
) -> None:
    await stack.register(repo, url=URL)
    environment_id = await open_issue(stack, fake, 8)
    (path,) = worktree_paths(repo)
    (Path(path) / "notes.txt").write_text("half-done work\n")

    await close(stack, "issues", issues_event("closed", 8))
    report: RemovalReport = await environment(stack, environment_id).result()

    assert report.outcome == "removed" and report.archive_refs == [f"refs/isolator/archive/{environment_id}"]
    assert not Path(path).exists() and await status_of(stack, environment_id) == "destroyed"
    assert "half-done work" in file_in_archive(repo, report.archive_refs[0])
    assert "/worktree restore issue-8" in report.message


async def test_a_branch_with_unpushed_commits_survives_the_close(stack: Stack, fake: FakeGitHub, repo: Path) -> None:
    await stack.register(repo, url=URL)
    environment_id = await open_issue(stack, fake, 9)
    (path,) = worktree_paths(repo)
    (Path(path) / "fix.txt").write_text("the fix\n")
    git("add", "fix.txt", cwd=Path(path))
    git("commit", "-q", "-m", "Fix the bug", cwd=Path(path))
    commit = git("rev-parse", "HEAD", cwd=Path(path)).strip()

    await close(stack, "issues", issues_event("closed", 9))
    report = await environment(stack, environment_id).result()
    assert (report.outcome, report.branch_outcome) == ("removed", "archived")
    assert not Path(path).exists()
    assert git("rev-parse", "issue-9", cwd=repo).strip() == commit, "committed work is never deleted"
    assert archive_git(repo, "rev-parse", f"{report.archive_refs[0]}^").strip() == commit


async def test_repeated_signals_change_nothing(stack: Stack, fake: FakeGitHub, repo: Path) -> None:
    await stack.register(repo, url=URL)
    environment_id = await open_issue(stack, fake, 10)
    handle = environment(stack, environment_id)
    other = ConversationSignal("slack:C1:1700000000.000100", key="attach-slack-1")
    for _ in range(2):
        await handle.signal(EnvironmentWorkflow.attach, other)
    await handle.signal(EnvironmentWorkflow.detach, ConversationSignal(other.conversation, key="detach-slack-1"))
    await handle.signal(EnvironmentWorkflow.attach, other)  # the same key again: still detached
    state = await handle.query(EnvironmentWorkflow.state)
    assert state.attached == [f"github:{REPO}#10"]

    closing = ConversationSignal(f"github:{REPO}#10", key="close-1")
    await handle.signal(EnvironmentWorkflow.attach, ConversationSignal(other.conversation, key="attach-slack-2"))
    await handle.signal(EnvironmentWorkflow.conversation_closed, closing)
    await handle.signal(EnvironmentWorkflow.conversation_closed, closing)
    state = await settled_state(stack, environment_id)
    assert (state.status, state.attached, state.closed) == ("active", [other.conversation], [closing.conversation])
    assert len(worktree_paths(repo)) == 1
