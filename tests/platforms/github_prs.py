"""Pull requests in the tests: an upstream for the checkout, PR deliveries, and what a PR's worktree holds."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from isolator.contracts.message import Resolution
from tests.chat_commands import active_rows
from tests.conftest import Stack
from tests.fakes.github_api import FakeGitHub
from tests.gitrepos import (
    git,
)
from tests.platforms.github import (
    REPO,
    deliver,
    pull_request_event,
    repository,
    resolution,
)

MENTION = "@isolator please review"


FORK = "contributor/hello-world"


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


async def active_identities(stack: Stack) -> list[tuple]:
    """(type, id, branch, path, adopted) of the active environments; adopted is `metadata.adopted`."""
    return [(row["workflow_type"], row["workflow_id"], row["branch_name"], row["working_path"],
             row["metadata"].get("adopted", False)) for row in await active_rows(stack)]


def head_of(path: Path) -> tuple[str, str]:
    """(branch, commit) checked out at `path`."""
    return git("symbolic-ref", "--short", "HEAD", cwd=path).strip(), git("rev-parse", "HEAD", cwd=path).strip()
