"""Pull requests end to end, through the signed GitHub webhook: a PR from the same repository is
checked out on its own branch (tracking origin), a PR from a fork on `pr-N-review` at its head
commit, and a PR that fixes an issue with a worktree shares that worktree.

The registered checkout's `origin` is a local bare repository playing GitHub: branches are pushed
to it, and a fork's commit is pushed to its `refs/pull/N/head`, as GitHub keeps every PR's head."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from isolator.contracts.message import Resolution
from tests.conftest import Stack
from tests.fakes.github_api import Comment, FakeGitHub
from tests.gitrepos import (
    branch_with_commit,
    branches,
    created_reply,
    git,
    worktree_paths,
)
from tests.test_github_webhook import (  # noqa: F401  (fixtures)
    REPO,
    URL,
    deliver,
    fake,
    issues_event,
    pull_request_event,
    repository,
    resolution,
    settings,
)

MENTION = "@isolator please review"
FORK = "contributor/hello-world"


# --- helpers shared with test_adoption and test_creation_failures --------------------------------


def with_upstream(repo: Path) -> Path:
    """A bare copy of `repo` next to it, made the checkout's `origin`; returns the bare repository."""
    upstream = repo.parent / "upstream.git"
    git("clone", "-q", "--bare", str(repo), str(upstream), cwd=repo.parent)
    git("remote", "add", "origin", str(upstream), cwd=repo)
    git("fetch", "-q", "origin", cwd=repo)
    return upstream


def push_commit(upstream: Path, ref: str, clone: Path, message: str = "Work on the PR") -> str:
    """Clone `upstream` into `clone`, commit a file, push that commit to `ref`; returns its SHA."""
    if not clone.exists():
        git("clone", "-q", str(upstream), str(clone), cwd=upstream.parent)
    (clone / f"{clone.name}.txt").write_text(f"{message}\n")
    git("add", ".", cwd=clone)
    git("commit", "-q", "-m", message, cwd=clone)
    git("push", "-q", "origin", f"HEAD:{ref}", cwd=clone)
    return git("rev-parse", "HEAD", cwd=clone).strip()


def pr_opened(number: int, ref: str, sha: str, head_repo: str | None = REPO, body: str = MENTION) -> dict[str, Any]:
    """A `pull_request` `opened` delivery with this head; `head_repo` None is a deleted fork."""
    payload = pull_request_event("opened", number, body)
    pull = payload["pull_request"]
    pull.update(state="open", merged=False)
    if head_repo is None:
        head_repository = None
    elif head_repo == REPO:
        head_repository = repository()
    else:
        owner, name = head_repo.split("/")
        head_repository = {**repository(), "id": 4242, "name": name, "full_name": head_repo,
                           "owner": {"login": owner, "id": 5, "type": "User"},
                           "html_url": f"https://github.com/{head_repo}",
                           "clone_url": f"https://github.com/{head_repo}.git"}
    owner = head_repo.split("/")[0] if head_repo else "ghost"
    pull["head"] = {"label": f"{owner}:{ref}", "ref": ref, "sha": sha, "repo": head_repository}
    return payload


async def settle(stack: Stack, delivery: str) -> Resolution:
    """The message's Resolution; a workflow stuck retrying fails the test instead of hanging it."""
    return await asyncio.wait_for(resolution(stack, delivery), timeout=60)


async def open_pr(
    stack: Stack, fake: FakeGitHub, number: int, ref: str, sha: str, head_repo: str | None = REPO,
    closes: tuple[int, ...] = (), body: str = MENTION,
) -> Resolution:
    """The PR as GitHub knows it (for GraphQL and the comment) and its `opened` delivery; its Resolution."""
    fake.add_pull(REPO, number, ref, sha, head_repository="" if head_repo == REPO else head_repo, closes=closes)
    response, delivery = await deliver(stack, "pull_request", pr_opened(number, ref, sha, head_repo, body))
    assert response.status_code == 202, response.text
    return await settle(stack, delivery)


async def active_rows(stack: Stack) -> list[tuple]:
    """(type, id, branch, path, adopted) of the active environments; adopted is `metadata.adopted`."""
    rows = await stack.db.fetch(
        """SELECT workflow_type, workflow_id, branch_name, working_path, metadata
           FROM isolation_environments WHERE status = 'active' ORDER BY created_at"""
    )
    return [(*tuple(row)[:4], row["metadata"].get("adopted", False)) for row in rows]


def head_of(path: Path) -> tuple[str, str]:
    """(branch, commit) checked out at `path`."""
    return git("symbolic-ref", "--short", "HEAD", cwd=path).strip(), git("rev-parse", "HEAD", cwd=path).strip()


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
    assert await active_rows(stack) == [("pr", "99", "feature/x", str(path), False)]
    assert fake.comments == [Comment(REPO, 99, f"Reviewing PR at commit `{sha[:7]}` (branch: `feature/x`)")]


async def test_a_pr_whose_branch_is_only_local_is_checked_out_on_that_branch(
    stack: Stack, fake: FakeGitHub, repo: Path
) -> None:
    sha = branch_with_commit(repo, "feature/x", "extra.txt", "extra\n", "Extra")
    codebase = await stack.register(repo, url=URL)  # no `origin` at all

    result = await open_pr(stack, fake, 98, "feature/x", sha)

    path = stack.settings.worktree_base.resolve() / codebase["name"] / "feature-x"
    assert (result.outcome, result.branch, result.working_path) == ("created", "feature/x", str(path))
    assert head_of(path) == ("feature/x", sha)
    assert await active_rows(stack) == [("pr", "98", "feature/x", str(path), False)]
    assert fake.comments == [Comment(REPO, 98, f"Reviewing PR at commit `{sha[:7]}` (branch: `feature/x`)")]


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
    assert fake.comments == [Comment(REPO, 97, f"Reviewing PR at commit `{sha[:7]}` (branch: `feature/x`)")]


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
    assert await active_rows(stack) == [("pr", "77", "pr-77-review", str(path), False)]
    assert fake.comments == [Comment(REPO, 77, f"Reviewing PR at commit `{sha[:7]}` (branch: `pr-77-review`)")]


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
    assert await active_rows(stack) == [("issue", "42", "issue-42", str(path), False)]
    conversations = await stack.db.fetch(
        "SELECT platform_conversation_id, environment_id::text FROM conversations ORDER BY platform_conversation_id"
    )
    assert [tuple(row) for row in conversations] == [
        (f"{REPO}#42", issue.environment_id), (f"{REPO}#43", issue.environment_id)
    ]
    assert fake.comments == [
        Comment(REPO, 42, created_reply("issue-42", repo)),
        Comment(REPO, 43, "Reusing worktree from issue #42"),
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
        if len(fake.comments) == 2:
            break
        await asyncio.sleep(0.05)
    assert [comment.body for comment in fake.comments][1] == skipped
    assert await stack.db.fetchval("SELECT setup_state FROM isolation_environments WHERE branch_name = $1",
                                   "pr-78-review") == "skipped"
    assert not (Path(result.working_path or "") / "ran.txt").exists()
