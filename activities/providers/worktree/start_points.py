"""Where a new worktree's branch starts: the fresh base, a PR's own branch fetched from origin (and a
local copy that is only behind it caught up), or a fork's head under `refs/pull/N/head`."""

from __future__ import annotations

from pathlib import Path

from temporalio.exceptions import ApplicationError

from activities.git.runner import GitError, branch_exists, run_git
from activities.providers.worktree.base import Base
from isolator.contracts.errors import WORKTREE_CONFLICT
from isolator.contracts.worktree import WorktreeRequest


async def start_point_of(repository: Path, request: WorktreeRequest, base: Base) -> str:
    """Where a new branch starts; for PRs, fetch what the PR points at first."""
    if request.source == "default":
        return base.revision
    if request.source == "pr_branch":
        remote_ref = f"refs/remotes/origin/{request.branch}"
        await _fetch(repository, f"+refs/heads/{request.branch}:{remote_ref}", request)
        await fast_forward(repository, request.branch, remote_ref)
        return remote_ref
    # A fork's branch is not in origin; GitHub keeps every PR's head under refs/pull/N/head.
    await _fetch(repository, f"+refs/pull/{request.pr_number}/head:refs/isolator/pull/{request.pr_number}", request)
    sha = request.head_sha or f"refs/isolator/pull/{request.pr_number}"
    found = await run_git("rev-parse", "--verify", "--quiet", f"{sha}^{{commit}}", cwd=repository, check=False)
    if found.returncode != 0:
        raise ApplicationError(
            f"The PR's head commit `{sha[:12]}` is not in the repository, even after fetching "
            f"`refs/pull/{request.pr_number}/head`. Push the PR again or check that it still exists.",
            type=WORKTREE_CONFLICT,
            non_retryable=True,
        )
    return found.stdout.strip()


async def fast_forward(repository: Path, branch: str, remote_ref: str) -> None:
    """A branch that is only behind `remote_ref` (a PR's head, the fresh base) catches up with it. One with
    commits of its own stays as it is, and `git branch -f` refuses a branch checked out anywhere."""
    behind = await run_git(
        "merge-base", "--is-ancestor", f"refs/heads/{branch}", remote_ref, cwd=repository, check=False
    )
    if behind.returncode == 0:
        await run_git("branch", "--force", "--", branch, remote_ref, cwd=repository, check=False)


async def _fetch(repository: Path, refspec: str, request: WorktreeRequest) -> None:
    """Fetch from origin; a ref that does not exist is the user's to fix, a network error is retried."""
    result = await run_git("fetch", "--quiet", "--no-tags", "origin", refspec, cwd=repository, check=False)
    if result.returncode == 0:
        return
    missing = ("couldn't find remote ref", "no such remote", "does not appear to be a git repository")
    if any(marker in result.stderr.lower() for marker in missing):
        if request.source == "pr_branch" and await branch_exists(repository, request.branch):
            return  # no origin copy, but the branch is here: work on it as it is
        raise ApplicationError(
            f"Could not fetch `{refspec.split(':')[0].lstrip('+')}` from origin: {result.stderr.strip()}. "
            "Check that the PR's branch still exists and that the checkout's `origin` points at the repository.",
            type=WORKTREE_CONFLICT,
            non_retryable=True,
        )
    raise GitError(["fetch", "origin", refspec], result.returncode, result.stderr)
