"""Adoption: a worktree already on disk for this work is recorded as it is, never made twice."""

from __future__ import annotations

from pathlib import Path

from temporalio.exceptions import ApplicationError

from activities.git.host_locks import host_locks
from activities.git.ownership import made_here
from activities.git.paths import UnsafePathError, worktree_path
from activities.git.runner import run_git
from activities.providers.worktree.survey import list_worktrees
from isolator.contracts.errors import UNSAFE_PATH, WORKTREE_CONFLICT
from isolator.contracts.worktree import Adoptable, AdoptQuery
from isolator.settings import Settings


def slug(branch: str) -> str:
    return branch.replace("/", "-")


class AdoptionFinder:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    async def find(self, query: AdoptQuery) -> Adoptable | None:
        """A worktree at the expected path, or one checked out on the PR's branch (or its slug)."""
        repository = Path(query.codebase.canonical_path)
        try:
            expected = worktree_path(self.settings.worktree_base, query.codebase.name, query.branch)
        except UnsafePathError as error:
            raise ApplicationError(str(error), type=UNSAFE_PATH, non_retryable=True) from None
        # The locks of create_worktree: a creation under way is waited for, never taken for a stranger.
        async with host_locks(self.settings.worktree_base, expected, repository):
            present = expected.exists()
            if not present and not query.pr_branch:
                return None  # nothing at the expected path, and no PR branch to look for elsewhere: no git
            listed = await list_worktrees(run_git, repository)
            worktrees = [entry for entry in listed if not entry.main and not entry.prunable]
            # empty: a half-made create; ours (marked) but not listed there: a warm worktree being claimed
            expected_is_stranger = present and not _is_empty_dir(expected) and not made_here(expected)
        for entry in worktrees:
            if entry.path == expected and entry.branch is not None:
                # One the service made (a concurrent message's, not yet recorded) is resumed by
                # create_worktree and counted as created, never adopted.
                return None if made_here(entry.path) else Adoptable(path=str(entry.path), branch=entry.branch)
        if expected_is_stranger:
            raise ApplicationError(
                f"`{expected}` already exists but is not a worktree of {query.codebase.name}, so it was not "
                "used. Move it away or remove it, then send the message again.",
                type=WORKTREE_CONFLICT,
                non_retryable=True,
            )
        if query.pr_branch:
            # Only under the base: the service takes charge of no worktree it could not remove later
            # (a developer's own checkout of the branch stays theirs).
            base = self.settings.worktree_base.resolve()
            wanted = {query.pr_branch, slug(query.pr_branch)}
            for entry in worktrees:
                branch = entry.branch
                on_branch = branch is not None and (branch in wanted or slug(branch) in wanted)
                if on_branch and entry.path.is_relative_to(base) and entry.path.exists() and not made_here(entry.path):
                    return Adoptable(path=str(entry.path), branch=branch)
        return None


def _is_empty_dir(path: Path) -> bool:
    return path.is_dir() and not any(path.iterdir())
