"""Where a new worktree comes from, end to end through the signed GitHub webhook: an `issue-N`
branch that already exists is checked out as it is, and an event from a repository nobody
registered clones it (from the payload's `clone_url`) into the workspace first."""

from __future__ import annotations

from pathlib import Path

from isolator.contracts.message import Resolution
from tests.conftest import Stack
from tests.fakes.github_api import Comment, FakeGitHub
from tests.gitrepos import (
    branch_with_commit,
    branches,
    first_replies,
    git,
    make_repo,
    worktree_paths,
)
from tests.platforms.github import REPO, URL, deliver, issues_event
from tests.platforms.github_prs import active_identities, head_of, settle
from workflows.chat.agent_texts import no_agent

MENTION = "@isolator please fix"


async def open_issue(stack: Stack, fake: FakeGitHub, number: int, clone_url: str | None = None) -> Resolution:
    fake.add_issue(REPO, number)
    payload = issues_event("opened", number, MENTION)
    if clone_url is not None:
        payload["repository"]["clone_url"] = clone_url
    response, delivery = await deliver(stack, "issues", payload)
    assert response.status_code == 202, response.text
    return await settle(stack, delivery)


async def test_an_existing_issue_branch_is_checked_out_with_its_commits(
    stack: Stack, fake: FakeGitHub, repo: Path
) -> None:
    commit = branch_with_commit(repo, "issue-12", "started.txt", "work from yesterday\n", "Start on issue 12")
    codebase = await stack.register(repo, url=URL)

    result = await open_issue(stack, fake, 12)

    path = stack.settings.worktree_base.resolve() / codebase["name"] / "issue-12"
    assert (result.outcome, result.branch, result.working_path) == ("created", "issue-12", str(path))
    assert head_of(path) == ("issue-12", commit)
    assert (path / "started.txt").read_text() == "work from yesterday\n"
    assert git("rev-parse", "issue-12", cwd=repo).strip() == commit, "the branch was not moved"
    assert await active_identities(stack) == [("issue", "12", "issue-12", str(path), False)]
    metadata = await stack.db.fetchval("SELECT metadata FROM isolation_environments")
    assert "start_commit" not in metadata, "a branch with work of its own is not recorded as fresh"
    assert fake.comments == [Comment(REPO, 12, "Working in isolated branch `issue-12`"), Comment(REPO, 12, no_agent())]


def bare_repository(tmp_path: Path) -> Path:
    """A repository only reachable by cloning, as GitHub's is."""
    source = make_repo(tmp_path / "elsewhere" / "source")
    git("commit", "-q", "--allow-empty", "-m", "second", cwd=source)
    bare = tmp_path / "elsewhere" / "hello-world.git"
    git("clone", "-q", "--bare", str(source), str(bare), cwd=tmp_path)
    return bare


async def test_an_event_from_an_unregistered_repository_clones_it_and_works_in_it(
    stack: Stack, fake: FakeGitHub, tmp_path: Path
) -> None:
    bare = bare_repository(tmp_path)
    head = git("rev-parse", "HEAD", cwd=bare).strip()

    result = await open_issue(stack, fake, 3, clone_url=bare.as_uri())

    clone = stack.settings.workspace_path.resolve() / "hello-world"
    codebase = await stack.db.fetchrow("SELECT name, canonical_path, repository_url FROM codebases")
    assert tuple(codebase) == ("hello-world", str(clone), bare.as_uri())  # a local URL as it is: it exists
    assert git("remote", "get-url", "origin", cwd=clone).strip() == bare.as_uri()
    path = stack.settings.worktree_base.resolve() / "hello-world" / "issue-3"
    assert (result.outcome, result.branch, result.working_path) == ("created", "issue-3", str(path))
    assert worktree_paths(clone) == [str(path)]
    assert head_of(path) == ("issue-3", head)
    assert await active_identities(stack) == [("issue", "3", "issue-3", str(path), False)]
    assert fake.comments == [Comment(REPO, 3, text) for text in first_replies("issue-3", clone)]

    # Another issue of the same repository works in the same codebase: no second clone.
    other = await open_issue(stack, fake, 4, clone_url=bare.as_uri())
    assert (other.outcome, other.branch) == ("created", "issue-4")
    assert fake.comments[2:] == [Comment(REPO, 4, text) for text in first_replies("issue-4", clone)], "told once each"
    assert await stack.db.fetchval("SELECT count(*) FROM codebases") == 1
    assert sorted(entry.name for entry in stack.settings.workspace_path.iterdir()) == ["hello-world"]
    assert sorted(branches(clone)) == ["issue-3", "issue-4", "main"]


async def test_an_unregistered_repository_that_cannot_be_cloned_fails_cleanly(
    stack: Stack, fake: FakeGitHub, tmp_path: Path
) -> None:
    gone = (tmp_path / "elsewhere" / "hello-world.git").as_uri()

    result = await open_issue(stack, fake, 3, clone_url=gone)

    assert (result.outcome, result.working_path) == ("failed", None)
    assert await stack.db.fetchval("SELECT count(*) FROM codebases") == 0
    assert await stack.db.fetchval("SELECT count(*) FROM isolation_environments") == 0
    workspace = stack.settings.workspace_path
    assert not workspace.exists() or list(workspace.iterdir()) == [], "no half-made clone"
    (comment,) = fake.comments
    assert comment.body.startswith(f"Could not set up a worktree: Could not clone {gone}: "), comment.body
