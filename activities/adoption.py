"""Adoption: a worktree already on disk for this work is recorded as it is, never made twice."""

from __future__ import annotations

from pathlib import Path

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.contracts import UNSAFE_PATH, WORKTREE_CONFLICT, Adoptable, AdoptQuery
from activities.git import run_git
from activities.locks import host_locks
from activities.paths import UnsafePathError, worktree_path
from activities.survey import list_worktrees
from isolator.settings import Settings


def slug(branch: str) -> str:
    return branch.replace("/", "-")


class AdoptionActivities:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    @activity.defn
    async def find_adoptable_worktree(self, query: AdoptQuery) -> Adoptable | None:
        """A worktree at the expected path, or one checked out on the PR's branch (or its slug)."""
        repository = Path(query.codebase.canonical_path)
        try:
            expected = worktree_path(self.settings.worktree_base, query.codebase.name, query.branch)
        except UnsafePathError as error:
            raise ApplicationError(str(error), type=UNSAFE_PATH, non_retryable=True) from None
        # The locks of create_worktree: a creation under way is waited for, never taken for a stranger.
        async with host_locks(self.settings.worktree_base, expected, repository):
            await run_git("worktree", "prune", cwd=repository)
            worktrees = [entry for entry in await list_worktrees(run_git, repository) if not entry.main]
            expected_is_stranger = expected.exists() and not _is_empty_dir(expected)  # empty: a half-made create
        for entry in worktrees:
            if entry.path == expected and entry.branch is not None:
                return Adoptable(path=str(entry.path), branch=entry.branch)
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
                if on_branch and entry.path.is_relative_to(base) and entry.path.exists():
                    return Adoptable(path=str(entry.path), branch=branch)
        return None


def _is_empty_dir(path: Path) -> bool:
    return path.is_dir() and not any(path.iterdir())
