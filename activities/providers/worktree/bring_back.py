"""A removed worktree's archive brought into the active worktree that works on its branch again.

After `/worktree remove --force`, the next message makes a new worktree on the same branch without the
uncommitted files; the archive still holds them. When the active worktree has no changes of its own and
its branch is where the archive left it, the archived files (what was staged staged again) are written
into it. Otherwise nothing is put over the user's work: the archive stays, a commit shaped like a stash
(its first parent the branch's commit, its second the index), which `git stash apply <commit>` applies.
"""

from __future__ import annotations

from pathlib import Path

from temporalio import activity

from activities.git.host_locks import host_locks
from activities.git.paths import UnsafePathError, ensure_inside
from activities.git.runner import run_git
from activities.providers.worktree.archive import fill_from_archive, read_archive, worktree_files
from activities.providers.worktree.archive_store import archive_store
from activities.providers.worktree.survey import is_dirty
from isolator.contracts.archive import BringBackInput, BroughtBack
from isolator.settings import Settings


class BringBackActivities:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    @activity.defn
    async def bring_archive_into_worktree(self, request: BringBackInput) -> BroughtBack:
        base, repository = self.settings.worktree_base, Path(request.codebase.canonical_path)
        try:
            path = ensure_inside(base, Path(request.working_path))
        except UnsafePathError:
            return BroughtBack("kept", reason=f"`{request.working_path}` is outside the worktree folder")
        async with host_locks(base, path, repository):
            store = await archive_store(repository)
            archived = await read_archive(store, request.archive_ref)
            if archived is None:
                return BroughtBack("gone")
            archive, trees = archived
            commit, archived_at = archive.commit, archive.head
            if not (path / ".git").exists():
                return BroughtBack("kept", commit, f"`{path}` is gone")
            head = await _commit_of(path, "HEAD")
            on_branch = await run_git("symbolic-ref", "--quiet", "--short", "HEAD", cwd=path, check=False)
            if on_branch.stdout.strip() != request.branch:
                return BroughtBack("kept", commit, f"`{path}` is not on branch `{request.branch}` now")
            if head == archived_at and (await worktree_files(path, store)).tree == trees.files:
                return BroughtBack("applied", commit)  # a retry after the files went in
            if await is_dirty(run_git, path):
                return BroughtBack("kept", commit, f"`{path}` has uncommitted changes of its own")
            if head != archived_at:
                return BroughtBack("kept", commit, f"branch `{request.branch}` has moved on since it was archived "
                                                   f"(it was at {(archived_at or 'no commit')[:10]}, it is at {(head or 'no commit')[:10]})")
            await fill_from_archive(store, path, trees)
        return BroughtBack("applied", commit)


async def _commit_of(cwd: Path, revision: str) -> str | None:
    found = await run_git("rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}", cwd=cwd, check=False)
    return found.stdout.strip() if found.returncode == 0 else None
