"""Adoption: a worktree already on disk for this work is recorded as it is, never made twice."""

from __future__ import annotations

from pathlib import Path

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.contracts import UNSAFE_PATH, WORKTREE_CONFLICT, Adoptable, AdoptQuery
from activities.git import run_git
from activities.paths import UnsafePathError, worktree_path
from isolator.settings import Settings


def slug(branch: str) -> str:
    return branch.replace("/", "-")


async def list_worktrees(repository: Path) -> list[tuple[Path, str | None]]:
    """(path, branch) of every linked worktree of `repository`; branch None when detached."""
    listing = await run_git("worktree", "list", "--porcelain", cwd=repository)
    entries: list[tuple[Path, str | None]] = []
    for block in listing.stdout.strip().split("\n\n"):
        lines = block.splitlines()
        path = next((line[len("worktree "):] for line in lines if line.startswith("worktree ")), None)
        ref = next((line[len("branch "):] for line in lines if line.startswith("branch ")), None)
        if path is not None:
            entries.append((Path(path).resolve(), ref.removeprefix("refs/heads/") if ref else None))
    return entries[1:]  # the first is the main checkout, never adopted


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
        await run_git("worktree", "prune", cwd=repository)
        worktrees = await list_worktrees(repository)
        for path, branch in worktrees:
            if path == expected and branch is not None:
                return Adoptable(path=str(path), branch=branch)
        if expected.exists() and not _is_empty_dir(expected):  # an empty one is a half-made create
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
            for path, branch in worktrees:
                on_branch = branch is not None and (branch in wanted or slug(branch) in wanted)
                if on_branch and path.is_relative_to(base) and path.exists():
                    return Adoptable(path=str(path), branch=branch)
        return None


def _is_empty_dir(path: Path) -> bool:
    return path.is_dir() and not any(path.iterdir())
