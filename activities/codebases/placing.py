"""A worktree put (again) on this host from what origin and the archive store hold: after its host's disk was
lost (activities/codebases/rebuild.py) or when its codebase moves here (activities/codebases/moving.py).

In this order: its archive (the local one, else origin's copy, pushed with ARCHIVE_PUSH or by a move),
which brings back its uncommitted and untracked files too, unless origin's branch has moved on past it
(the archived work was committed and pushed since); else its branch as origin has it, committed work only;
else nothing is left of it ("lost").
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from activities.git.credentials import credential_variables
from activities.git.host_locks import host_locks
from activities.git.ownership import mark_as_made_here
from activities.git.runner import GitError, commits_of, config_variables, run_git
from activities.providers.worktree.archive import read_archive
from activities.providers.worktree.archive_push import fetch_pushed_archive, origin_url, push_token
from activities.providers.worktree.archive_store import archive_store
from activities.providers.worktree.creation import is_healthy_worktree
from activities.providers.worktree.restoring import WorktreeRestorer
from isolator.contracts.codebase import Codebase
from isolator.contracts.worktree import RestoreWorktreeInput
from isolator.settings import Settings

PlacedFrom = Literal["already", "archive", "branch", "lost"]


@dataclass(frozen=True)
class Placed:
    outcome: PlacedFrom
    note: str = ""  # why it is lost, or what a restore refused


class WorktreePlacer:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.restorer = WorktreeRestorer(settings)

    async def place(self, codebase: Codebase, path: Path, branch: str, archive_ref: str) -> Placed:
        """The worktree of `branch` at `path`, from the archive `archive_ref` or origin's branch (idempotent)."""
        if is_healthy_worktree(path):
            return Placed("already")
        repository = Path(codebase.canonical_path)
        async with host_locks(self.settings.worktree_base, path, repository):
            origin_tip = await self._fetch_branch(repository, branch)
            store = await archive_store(repository)
            saved = await read_archive(store, archive_ref)
            archive = saved[0] if saved is not None else await fetch_pushed_archive(
                repository, archive_ref, push_token(self.settings))
            use_archive = archive is not None and not await _moved_on_past(repository, archive.head, origin_tip)
            if use_archive and archive is not None:
                await _branch_at(repository, branch, archive.head or origin_tip)
        if use_archive and archive is not None:
            restored = await self.restorer.restore(RestoreWorktreeInput(
                codebase, str(path), branch, archive_ref, archive.head or origin_tip))
            return Placed("archive") if restored.outcome == "restored" else Placed("lost", restored.message)
        if origin_tip is None:
            return Placed("lost", f"`{branch}` was never pushed to origin")
        async with host_locks(self.settings.worktree_base, path, repository):
            return await self._add_from_origin(repository, path, branch)

    async def _fetch_branch(self, repository: Path, branch: str) -> str | None:
        """Origin's commit of `branch`, fetched; None when origin has no such branch (or cannot be reached)."""
        url = await origin_url(repository)
        if url is None:
            return None
        pairs, variables = credential_variables(url, push_token(self.settings))
        await run_git("fetch", "--quiet", "--no-tags", "origin", f"+refs/heads/{branch}:refs/remotes/origin/{branch}",
                      cwd=repository, check=False, env={**config_variables(pairs), **variables} if pairs else None)
        [tip] = await commits_of(repository, f"refs/remotes/origin/{branch}")
        return tip

    async def _add_from_origin(self, repository: Path, path: Path, branch: str) -> Placed:
        [local] = await commits_of(repository, f"refs/heads/{branch}")
        new_branch = ["--track", "-b", branch] if local is None else []
        start = [f"refs/remotes/origin/{branch}"] if local is None else [branch]
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            await run_git("worktree", "add", *new_branch, "--", str(path), *start, cwd=repository)
        except GitError as error:
            return Placed("lost", error.stderr or str(error))
        mark_as_made_here(path)
        return Placed("branch")


async def _moved_on_past(repository: Path, head: str | None, origin_tip: str | None) -> bool:
    """Origin's branch holds the archive's commit and more: what was archived was committed and pushed since."""
    if head is None or origin_tip is None or head == origin_tip:
        return False
    asked = await run_git("merge-base", "--is-ancestor", head, origin_tip, cwd=repository, check=False)
    return asked.returncode == 0


async def _branch_at(repository: Path, branch: str, commit: str | None) -> None:
    """The local branch made at `commit` when this checkout has none (a fresh clone has its default branch only)."""
    [local] = await commits_of(repository, f"refs/heads/{branch}")
    if local is None and commit is not None:
        await run_git("update-ref", f"refs/heads/{branch}", commit, "", cwd=repository)
