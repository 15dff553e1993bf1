"""Pull requests end to end, through the signed GitHub webhook: a PR from the same repository is
checked out on its own branch (tracking origin), a PR from a fork on `pr-N-review` at its head
commit, and a PR that fixes an issue with a worktree shares that worktree.

The registered checkout's `origin` is a local bare repository playing GitHub: branches are pushed
to it, and a fork's commit is pushed to its `refs/pull/N/head`, as GitHub keeps every PR's head."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.conftest import Stack
from tests.fakes.github_api import Comment, FakeGitHub
from tests.gitrepos import (
    branch_with_commit,
    branches,
    first_replies,
    git,
    worktree_paths,
)
from tests.platforms.github import (
    REPO,
    URL,
    deliver,
    issues_event,
)
from tests.platforms.github_prs import (
    FORK,
    MENTION,
    active_identities,
    head_of,
    open_pr,
    push_commit,
    settle,
    with_upstream,
)
from workflows.chat.agent_texts import no_agent

# --- helpers shared with test_adoption and test_creation_failures --------------------------------


def reviewing(sha: str, branch: str) -> list[str]:
    """A PR's first comments with no agent configured: the review's line, then that no agent answers."""
    return [f"Reviewing PR at commit `{sha[:7]}` (branch: `{branch}`)", no_agent()]


# --- the cases -----------------------------------------------------------------------------------


async def test_a_pr_from_the_same_repository_is_checked_out_on_its_branch_tracking_origin(
    stack: Stack, fake: FakeGitHub, repo: Path
) -> None:
    upstream = with_upstream(repo)
    sha = push_commit(upstream, "refs/heads/feature/x", repo.parent / "developer")
    codebase = await stack.register(repo, url=URL)
    assert "feature/x" not in branches(repo), "the branch is only on origin, as after a push from elsewhere"

    result = await open_pr(stack, fake, 99, "feature/x", sha)

    path = stack.settings.worktree_base.resolve() / codebase["name"] / "feature-x"
    assert (result.outcome, result.branch, result.working_path) == ("created", "feature/x", str(path))
    assert worktree_paths(repo) == [str(path)]
    assert head_of(path) == ("feature/x", sha)
    assert (path / "developer.txt").read_text() == "Work on the PR\n"
    # Pushes from the worktree go to the PR's branch.
    assert git("rev-parse", "--abbrev-ref", "feature/x@{upstream}", cwd=repo).strip() == "origin/feature/x"
    assert await active_identities(stack) == [("pr", "99", "feature/x", str(path), False)]
    assert fake.comments == [Comment(REPO, 99, text) for text in reviewing(sha, "feature/x")]


async def test_a_pr_whose_branch_is_only_local_is_checked_out_on_that_branch(
    stack: Stack, fake: FakeGitHub, repo: Path
) -> None:
    sha = branch_with_commit(repo, "feature/x", "extra.txt", "extra\n", "Extra")
    codebase = await stack.register(repo, url=URL)  # no `origin` at all

    result = await open_pr(stack, fake, 98, "feature/x", sha)

    path = stack.settings.worktree_base.resolve() / codebase["name"] / "feature-x"
    assert (result.outcome, result.branch, result.working_path) == ("created", "feature/x", str(path))
    assert head_of(path) == ("feature/x", sha)
    assert await active_identities(stack) == [("pr", "98", "feature/x", str(path), False)]
    assert fake.comments == [Comment(REPO, 98, text) for text in reviewing(sha, "feature/x")]


async def test_a_local_copy_of_the_prs_branch_behind_origin_is_brought_to_the_prs_head(
    stack: Stack, fake: FakeGitHub, repo: Path
) -> None:
    upstream = with_upstream(repo)
    developer = repo.parent / "developer"
    first = push_commit(upstream, "refs/heads/feature/x", developer, message="First")
    git("fetch", "-q", "origin", cwd=repo)
    git("branch", "-q", "--track", "feature/x", "origin/feature/x", cwd=repo)  # checked out here once
    sha = push_commit(upstream, "refs/heads/feature/x", developer, message="Second")  # the PR moved on
    codebase = await stack.register(repo, url=URL)

    result = await open_pr(stack, fake, 97, "feature/x", sha)

    path = stack.settings.worktree_base.resolve() / codebase["name"] / "feature-x"
    assert (result.outcome, result.branch) == ("created", "feature/x")
    assert head_of(path) == ("feature/x", sha), f"the worktree must be at the PR's head, not at {first[:7]}"
    assert fake.comments == [Comment(REPO, 97, text) for text in reviewing(sha, "feature/x")]


async def test_a_local_copy_of_the_prs_branch_with_commits_of_its_own_is_not_moved(
    stack: Stack, fake: FakeGitHub, repo: Path
) -> None:
    upstream = with_upstream(repo)
    developer = repo.parent / "developer"
    push_commit(upstream, "refs/heads/feature/x", developer, message="First")
    git("fetch", "-q", "origin", cwd=repo)
    git("checkout", "-q", "--track", "origin/feature/x", cwd=repo)
    local = push_commit(upstream, "refs/heads/unrelated", repo, message="Not pushed to the PR")
    git("checkout", "-q", "main", cwd=repo)
    sha = push_commit(upstream, "refs/heads/feature/x", developer, message="Second")
    codebase = await stack.register(repo, url=URL)

    result = await open_pr(stack, fake, 96, "feature/x", sha)

    path = stack.settings.worktree_base.resolve() / codebase["name"] / "feature-x"
    assert result.outcome == "created"
    assert head_of(path) == ("feature/x", local), "committed work is never thrown away"


@pytest.mark.parametrize("head_repo", [FORK, None], ids=["fork", "deleted-fork"])
async def test_a_pr_from_a_fork_gets_a_review_branch_at_its_head_commit(
    stack: Stack, fake: FakeGitHub, repo: Path, head_repo: str | None
) -> None:
    upstream = with_upstream(repo)
    # The contributor pushes to their fork; GitHub publishes the PR's head on the base repository.
    sha = push_commit(upstream, "refs/pull/77/head", repo.parent / "fork", message="A contribution")
    codebase = await stack.register(repo, url=URL)

    result = await open_pr(stack, fake, 77, "patch-1", sha, head_repo=head_repo)

    path = stack.settings.worktree_base.resolve() / codebase["name"] / "pr-77-review"
    assert (result.outcome, result.branch, result.working_path) == ("created", "pr-77-review", str(path))
    assert worktree_paths(repo) == [str(path)]
    assert head_of(path) == ("pr-77-review", sha)
    assert "patch-1" not in branches(repo), "the fork's branch name is not taken over"
    assert await active_identities(stack) == [("pr", "77", "pr-77-review", str(path), False)]
    assert fake.comments == [Comment(REPO, 77, text) for text in reviewing(sha, "pr-77-review")]


async def test_a_pr_that_fixes_an_issue_with_a_worktree_shares_it(stack: Stack, fake: FakeGitHub, repo: Path) -> None:
    codebase = await stack.register(repo, url=URL)
    fake.add_issue(REPO, 42)
    response, delivery = await deliver(stack, "issues", issues_event("opened", 42, "@isolator the login fails"))
    assert response.status_code == 202, response.text
    issue = await settle(stack, delivery)
    path = stack.settings.worktree_base.resolve() / codebase["name"] / "issue-42"
    assert (issue.outcome, issue.working_path) == ("created", str(path))

    # GitHub links the PR to the issue (GraphQL closingIssuesReferences) because its body says so.
    result = await open_pr(stack, fake, 43, "feature/x", "c" * 40, closes=(42,), body=f"{MENTION}. Fixes #42")

    assert (result.outcome, result.working_path, result.branch) == ("shared", str(path), "issue-42")
    assert result.environment_id == issue.environment_id
    assert worktree_paths(repo) == [str(path)], "no second worktree"
    assert "feature/x" not in branches(repo)
    assert await active_identities(stack) == [("issue", "42", "issue-42", str(path), False)]
    conversations = await stack.db.fetch(
        "SELECT platform_conversation_id, environment_id::text FROM conversations ORDER BY platform_conversation_id"
    )
    assert [tuple(row) for row in conversations] == [
        (f"{REPO}#42", issue.environment_id), (f"{REPO}#43", issue.environment_id)
    ]
    # Each is a conversation of its own: each is told once that no agent answers.
    assert fake.comments == [
        *(Comment(REPO, 42, text) for text in first_replies("issue-42", repo)),
        Comment(REPO, 43, "Reusing worktree from issue #42"),
        Comment(REPO, 43, no_agent()),
    ]


async def test_a_fork_prs_setup_is_skipped_unless_the_repository_trusts_forks(
    stack: Stack, fake: FakeGitHub, repo: Path
) -> None:
    (repo / ".isolator.toml").write_text('[setup]\ncommands = ["echo ran > ran.txt"]\n')
    git("add", ".isolator.toml", cwd=repo)
    git("commit", "-q", "-m", "set-up", cwd=repo)
    upstream = with_upstream(repo)
    sha = push_commit(upstream, "refs/pull/78/head", repo.parent / "fork", message="A contribution")
    await stack.register(repo, url=URL)

    result = await open_pr(stack, fake, 78, "patch-2", sha, head_repo=FORK)

    skipped = ("The set-up of `pr-78-review` was skipped: the PR comes from a fork, and the repository's "
               "`.isolator.toml` runs set-up for forks only with `trust_forks = true`.")
    for _ in range(600):
        if len(fake.comments) == 3:
            break
        await asyncio.sleep(0.05)
    # The review line, then that no agent answers (the message's workflow) and the skipped set-up (the
    # environment's, at the same time): either of these may come first.
    bodies = [comment.body for comment in fake.comments]
    assert bodies[0] == reviewing(sha, "pr-78-review")[0] and sorted(bodies[1:]) == sorted([skipped, no_agent()]), bodies
    for _ in range(100):  # the state is recorded just after the comment is sent
        state = await stack.db.fetchval("SELECT setup_state FROM isolation_environments WHERE branch_name = $1",
                                        "pr-78-review")
        if state != "none":
            break
        await asyncio.sleep(0.05)
    assert state == "skipped"
    assert not (Path(result.working_path or "") / "ran.txt").exists()
