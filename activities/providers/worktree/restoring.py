"""Bringing a removed (or hibernated) worktree back from its archive, and pruning old archives.

A restore builds the worktree in a staging folder under WORKTREE_BASE/.restoring and moves it to its
path when it is whole: a restore killed halfway leaves nothing at the user's path, and its retry
clears the staging folder and starts again. The archive is only read, so nothing can be lost.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from activities.git.host_locks import host_locks
from activities.git.ownership import mark_as_made_here
from activities.git.paths import UnsafePathError, ensure_inside
from activities.git.runner import is_valid_branch_name, run_git
from activities.providers.worktree.archive import (
    archive_and_branch,
    branch_archives,
    delete_archive,
    fill_from_archive,
    staging_path,
    worktree_files,
)
from activities.providers.worktree.archive_push import delete_pushed_archive, fetch_pushed_archive, push_token
from activities.providers.worktree.archive_store import ArchiveStore, archive_store, keep_only_archived_objects
from activities.providers.worktree.base import default_branch_setup, fresh_base
from activities.providers.worktree.include import copy_included
from activities.providers.worktree.merged import branch_state, read_refs
from activities.providers.worktree.removal_records import RemovalRecords
from activities.providers.worktree.survey import ListedWorktree, list_worktrees
from isolator.contracts.repository import RepositorySetup
from isolator.contracts.worktree import (
    PruneArchivesInput,
    PrunedArchive,
    RestoredWorktree,
    RestoreWorktreeInput,
)
from isolator.settings import Settings


class WorktreeRestorer:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    async def restore(self, request: RestoreWorktreeInput) -> RestoredWorktree:
        base = self.settings.worktree_base
        try:
            path = ensure_inside(base, Path(request.working_path))
        except UnsafePathError:
            return _refused(f"`{request.working_path}` is outside the worktree folder.")
        if not await is_valid_branch_name(request.branch):
            return _refused(f"`{request.branch}` is not a valid branch name.")
        repository = Path(request.codebase.canonical_path)
        # Never the restored branch's own `.isolator.toml`: the agent committed there, and it would name
        # what is copied in from the main checkout and what runs. Read before the locks: it may fetch.
        default = request.codebase.default_branch
        fetched = await fresh_base(base, repository, default, self.settings.fetch_interval_seconds)
        setup = await default_branch_setup(repository, fetched, default)
        async with host_locks(base, path, repository):
            store = await archive_store(repository)
            (archive, tip), worktrees = await asyncio.gather(
                archive_and_branch(store, repository, request.archive_ref, request.branch),
                list_worktrees(run_git, repository))
            if archive is None and await fetch_pushed_archive(repository, request.archive_ref,
                                                              push_token(self.settings)) is not None:
                # Gone here (a disk lost, a codebase moved) but pushed to origin (ARCHIVE_PUSH): taken from there.
                archive, tip = await archive_and_branch(store, repository, request.archive_ref, request.branch)
            if archive is None:
                return _refused(f"The archive `{request.archive_ref}` is gone, so there is nothing to restore.")
            _, trees = archive
            if path.exists():
                return await self._already_there(store, path, request, trees.files, setup)
            staging = staging_path(base, path)
            if (problem := await self._branch_problem(store, tip, worktrees, staging, request)) is not None:
                return _refused(problem)
            if staging.exists() or any(entry.path == staging for entry in worktrees):
                await _clear(repository, staging)
            staging.parent.mkdir(parents=True, exist_ok=True)
            await run_git("worktree", "add", "--no-checkout", "--", str(staging), request.branch, cwd=repository)
            await fill_from_archive(store, staging, trees)
            path.parent.mkdir(parents=True, exist_ok=True)
            await run_git("worktree", "move", "--", str(staging), str(path), cwd=repository)
            RemovalRecords(base).forget(path)
            mark_as_made_here(path)
        await copy_included(repository, path, setup.config.include)
        return RestoredWorktree("restored", setup=setup)

    async def _already_there(self, store: ArchiveStore, path: Path, request: RestoreWorktreeInput,
                             files: str, setup: RepositorySetup) -> RestoredWorktree:
        """A retry after the move: the worktree is there, on its branch, with the archive's files."""
        listed = {entry.path: entry for entry in await list_worktrees(run_git, Path(request.codebase.canonical_path))}
        entry = listed.get(path)
        if entry is not None and entry.branch == request.branch and (await worktree_files(path, store)).tree == files:
            return RestoredWorktree("restored", setup=setup)
        return _refused(f"`{path}` already exists. Move it away or remove it, then restore again.")

    async def _branch_problem(self, store: ArchiveStore, tip: str | None, worktrees: list[ListedWorktree],
                              staging: Path, request: RestoreWorktreeInput) -> str | None:
        """The branch must be where the archive left it, and free; one deleted by hand is made again."""
        branch, repository = request.branch, Path(request.codebase.canonical_path)
        if tip is None:
            if request.branch_tip is None:
                return f"Branch `{branch}` is gone, and its archive has no commit to make it again from."
            await run_git("update-ref", f"refs/heads/{branch}", request.branch_tip, "", cwd=repository)
            return None
        if request.branch_tip is not None and tip != request.branch_tip:
            return (
                f"Branch `{branch}` has moved since it was archived (it was at {request.branch_tip[:10]}, it is at "
                f"{tip[:10]} now): its archived files over the new commits would undo them. The archived files "
                f"can be looked at with `mkdir <folder> && git --git-dir={store.path} archive {request.archive_ref} "
                "| tar -x -C <folder>`."
            )
        for entry in worktrees:
            if entry.branch == branch and entry.path != staging and not entry.prunable:
                return f"Branch `{branch}` is checked out at `{entry.path}`: remove that worktree first."
        return None


async def _clear(repository: Path, staging: Path) -> None:
    """What a restore killed halfway left in its staging folder (ours alone: nothing there is the user's)."""
    await run_git("worktree", "remove", "--force", "--force", "--", str(staging), cwd=repository, check=False)
    if staging.exists():
        shutil.rmtree(staging)
    await run_git("worktree", "prune", cwd=repository)


def _refused(message: str) -> RestoredWorktree:
    return RestoredWorktree("refused", message)


async def prune_archives(worktree_base: Path, request: PruneArchivesInput, settings: Settings | None = None
                         ) -> list[PrunedArchive]:
    """Delete each archive and what only it held, then its branch when no other archive or worktree uses it
    and its work is upstream or on another branch or remote (a branch with work of its own is kept, as by
    a removal). The objects go before the branches: what one archive held that another's branch reached
    is copied into the store while that branch still holds it."""
    repository = Path(request.codebase.canonical_path)
    default = request.codebase.default_branch
    async with host_locks(worktree_base, repository):
        store = await archive_store(repository)
        for archive in request.archives:
            await delete_archive(store, archive.archive_ref)
            if settings is not None and settings.archive_push:
                await delete_pushed_archive(repository, archive.archive_ref, push_token(settings))
        await keep_only_archived_objects(store)
        return [PrunedArchive(archive.environment_id, archive.branch,
                              await _settle(store, repository, archive.branch, default))
                for archive in request.archives]


async def _settle(store: ArchiveStore, repository: Path, branch: str, default: str) -> str:
    if not await is_valid_branch_name(branch) or branch == default:
        return "kept" if branch == default else "absent"
    state = await branch_state(run_git, repository, await read_refs(run_git, repository, default), branch)
    if not state.exists:
        return "absent"
    in_use = any(entry.branch == branch for entry in await list_worktrees(run_git, repository))
    if in_use or await branch_archives(store, branch) or not (state.merged or state.found_on):
        return "kept"
    await run_git("branch", "-D", "--", branch, cwd=repository)
    return "deleted"
