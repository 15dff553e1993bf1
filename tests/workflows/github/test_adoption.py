"""Adoption end to end, through the signed GitHub webhook: a worktree already on disk at the expected
path, or under the worktree base on the PR's branch (or its slug), is recorded as it is with
`metadata.adopted`, and nothing is created. A path there that is not a worktree of the codebase is
never taken over: the user is told, and nothing is recorded."""

from __future__ import annotations

from pathlib import Path

import pytest

from isolator.contracts.message import Resolution
from tests.conftest import Stack
from tests.fakes.github_api import Comment, FakeGitHub
from tests.gitrepos import branches, git, make_repo, worktree_paths
from tests.platforms.github import REPO, URL, comment_event, deliver, issues_event
from tests.platforms.github_prs import active_identities, head_of, open_pr, settle
from workflows.chat.agent_texts import no_agent


async def open_issue(stack: Stack, fake: FakeGitHub, number: int) -> Resolution:
    fake.add_issue(REPO, number)
    response, delivery = await deliver(stack, "issues", issues_event("opened", number, "@isolator please fix"))
    assert response.status_code == 202, response.text
    return await settle(stack, delivery)


def base_of(stack: Stack, codebase: dict) -> Path:
    """The codebase's folder under the worktree base."""
    return stack.settings.worktree_base.resolve() / codebase["name"]


def add_worktree(repo: Path, path: Path, branch: str) -> str:
    """`git worktree add -b branch path`, as a developer would; returns its commit."""
    git("worktree", "add", "-q", "-b", branch, str(path), cwd=repo)
    return git("rev-parse", "HEAD", cwd=path).strip()


async def test_a_worktree_already_at_the_expected_path_is_adopted(stack: Stack, fake: FakeGitHub, repo: Path) -> None:
    codebase = await stack.register(repo, url=URL)
    path = base_of(stack, codebase) / "issue-5"
    commit = add_worktree(repo, path, "issue-5")
    (path / "work.txt").write_text("uncommitted work in progress\n")

    result = await open_issue(stack, fake, 5)

    assert (result.outcome, result.branch, result.working_path) == ("adopted", "issue-5", str(path))
    assert worktree_paths(repo) == [str(path)]
    assert head_of(path) == ("issue-5", commit)
    assert (path / "work.txt").read_text() == "uncommitted work in progress\n", "adopted as it is"
    assert await active_identities(stack) == [("issue", "5", "issue-5", str(path), True)]
    # With no agent configured, the first message says so at once, after the adoption's line.
    assert fake.comments == [Comment(REPO, 5, f"Using the existing worktree at `{path}` (branch `issue-5`)"),
                             Comment(REPO, 5, no_agent())]

    # The next message reuses the adopted worktree, silently: the notice was said once.
    response, delivery = await deliver(stack, "issues", issues_event("opened", 5, "@isolator and another thing"))
    assert response.status_code == 202
    assert (await settle(stack, delivery)).outcome == "reused"
    assert len(fake.comments) == 2


@pytest.mark.parametrize("branch", ["feature/x", "feature-x"], ids=["same-branch", "slug"])
async def test_a_worktree_under_the_base_on_the_prs_branch_is_adopted(
    stack: Stack, fake: FakeGitHub, repo: Path, branch: str
) -> None:
    codebase = await stack.register(repo, url=URL)
    path = base_of(stack, codebase) / "reviewing-login"  # not where the service would put it
    commit = add_worktree(repo, path, branch)
    before = branches(repo)

    result = await open_pr(stack, fake, 99, "feature/x", commit)

    assert (result.outcome, result.branch, result.working_path) == ("adopted", branch, str(path))
    assert worktree_paths(repo) == [str(path)], "nothing created"
    assert branches(repo) == before
    assert not (base_of(stack, codebase) / "feature-x").exists()
    assert await active_identities(stack) == [("pr", "99", branch, str(path), True)]
    assert fake.comments == [Comment(REPO, 99, f"Using the existing worktree at `{path}` (branch `{branch}`)"),
                             Comment(REPO, 99, no_agent())]


async def test_a_worktree_on_the_prs_branch_outside_the_base_is_not_adopted(
    stack: Stack, fake: FakeGitHub, repo: Path
) -> None:
    """The service only takes charge of worktrees it could also remove: those under the base."""
    codebase = await stack.register(repo, url=URL)
    own = repo.parent / "my-feature-x"  # the developer's own worktree
    commit = add_worktree(repo, own, "feature/x")

    result = await open_pr(stack, fake, 99, "feature/x", commit)

    assert (result.outcome, result.working_path, result.branch) == ("failed", None, None)
    assert worktree_paths(repo) == [str(own)]
    assert not base_of(stack, codebase).exists() or list(base_of(stack, codebase).iterdir()) == []
    assert await active_identities(stack) == []
    (comment,) = fake.comments
    assert comment.body.startswith("Could not set up a worktree: Branch `feature/x` is already checked out")


def plain_directory(repo: Path, path: Path) -> None:
    path.mkdir(parents=True)
    (path / "notes.txt").write_text("mine\n")


def other_repositorys_worktree(repo: Path, path: Path) -> None:
    other = make_repo(repo.parent / "other")
    git("worktree", "add", "-q", "-b", "issue-6", str(path), cwd=other)
    (path / "notes.txt").write_text("mine\n")


@pytest.mark.parametrize("make", [plain_directory, other_repositorys_worktree], ids=["plain-dir", "other-repo"])
async def test_a_path_at_the_expected_place_that_is_not_our_worktree_is_never_adopted(
    stack: Stack, fake: FakeGitHub, repo: Path, make
) -> None:
    codebase = await stack.register(repo, url=URL)
    path = base_of(stack, codebase) / "issue-6"
    make(repo, path)

    result = await open_issue(stack, fake, 6)

    assert (result.outcome, result.working_path, result.environment_id) == ("failed", None, None)
    assert (path / "notes.txt").read_text() == "mine\n", "left untouched"
    assert worktree_paths(repo) == [] and "issue-6" not in branches(repo)
    assert await stack.db.fetchval("SELECT count(*) FROM isolation_environments") == 0
    assert await stack.db.fetchval("SELECT environment_id FROM conversations") is None
    assert fake.comments == [Comment(REPO, 6, (
        f"Could not set up a worktree: `{path}` already exists but is not a worktree of {codebase['name']}, "
        "so it was not used. Move it away or remove it, then send the message again."
    ))]


async def test_reuse_by_identity_comes_before_adoption_even_when_adoption_would_refuse(
    stack: Stack, fake: FakeGitHub, repo: Path
) -> None:
    """The identity, adoption and limit lookups are asked together; adoption's refusal (a stranger at
    the expected path) counts only if its step is reached, and reuse by identity comes first."""
    codebase = await stack.register(repo, url=URL)
    first = await open_issue(stack, fake, 8)
    expected = base_of(stack, codebase) / "issue-8"
    assert (first.outcome, first.working_path) == ("created", str(expected))
    # The environment's worktree now lives elsewhere, and the conversation has lost its link to it.
    moved = base_of(stack, codebase) / "issue-8-moved"
    git("worktree", "move", str(expected), str(moved), cwd=repo)
    await stack.db.execute("UPDATE isolation_environments SET working_path = $1 WHERE id = $2",
                           str(moved), first.environment_id)
    await stack.db.execute("UPDATE conversations SET environment_id = NULL, cwd = NULL")
    expected.mkdir()
    (expected / "notes.txt").write_text("mine\n")

    response, delivery = await deliver(stack, "issue_comment", comment_event(8, "@isolator and the logout too"))
    assert response.status_code == 202, response.text
    again = await settle(stack, delivery)

    assert (again.outcome, again.environment_id, again.working_path) == ("attached", first.environment_id, str(moved))
    assert (expected / "notes.txt").read_text() == "mine\n"
    assert len(await active_identities(stack)) == 1
