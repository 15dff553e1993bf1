"""Removing a worktree and settling its branch: the one removal every path uses (command, close, cleanup).

Every removal of an environment's worktree is archived first (activities/providers/worktree/archive.py):
its files, uncommitted and untracked ones included, become a commit under refs/isolator/archive/<id>
in the codebase's archive store (archive_store.py, which no sandboxed run sees), and its branch stays
while the archive lives, so `/worktree restore` can bring it back. A dirty worktree goes only with
`force` (every path but a plain command or API call sets it). Retries are safe: each step checks what
is already done.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from temporalio.exceptions import ApplicationError

from activities.git.host_locks import host_locks
from activities.git.paths import UnsafePathError, ensure_inside
from activities.git.runner import GitError, is_valid_branch_name, run_git
from activities.git.stale_locks import clear_stale_lock
from activities.git.staging import left_out_note
from activities.providers.worktree.archive import Archive, archive_ref, archives_of_branch, read_archive, save_archive
from activities.providers.worktree.archive_push import push_archive, push_token
from activities.providers.worktree.archive_store import archive_store
from activities.providers.worktree.merged import branch_state, read_refs
from activities.providers.worktree.removal_records import RemovalRecords
from activities.providers.worktree.survey import ListedWorktree, is_dirty, list_worktrees
from isolator.contracts.errors import WORKTREE_CONFLICT
from isolator.contracts.worktree import Refusal, RemovalReport, RemoveWorktreeInput
from isolator.settings import Settings

BranchOutcome = Literal["deleted", "kept", "archived", "absent"]


class WorktreeRemover:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.records = RemovalRecords(settings.worktree_base)

    async def remove(self, request: RemoveWorktreeInput) -> RemovalReport:
        """Remove the worktree at `request.working_path`, then delete, keep or archive its branch."""
        try:
            path = ensure_inside(self.settings.worktree_base, Path(request.working_path))
        except UnsafePathError:
            return _refused(
                "outside_base", f"`{request.working_path}` is outside the worktree folder, so it was not removed."
            )
        # The same locks as create_worktree: a removal and a creation never interleave on one path, and
        # git's records of the repository's worktrees and refs change one process at a time.
        async with host_locks(self.settings.worktree_base, path, Path(request.codebase.canonical_path)):
            if not path.exists() and (done := self.records.recall(path)) is not None:
                return done  # a retry of a removal that finished: its report, not "already gone"
            report = await self._remove(request, path)
            if report.outcome == "removed":
                self.records.keep(path, report)
            return report

    async def _remove(self, request: RemoveWorktreeInput, path: Path) -> RemovalReport:
        repository = Path(request.codebase.canonical_path)
        worktrees = await list_worktrees(run_git, repository)
        entry = next((worktree for worktree in worktrees if worktree.path == path), None)
        name = request.codebase.name
        if path == repository.resolve() or (entry is not None and entry.main):
            return _refused("not_a_worktree", f"`{path}` is the main checkout of `{name}`; it is never removed.")
        if entry is None and path.exists():
            return _refused("not_a_worktree", f"`{path}` is not a worktree of `{name}`, so it was not removed.")

        # A name git would not accept cannot be a branch of ours: its branch is left alone.
        branch = request.branch if await is_valid_branch_name(request.branch) else None
        ref = archive_ref(request.environment_id) if request.environment_id else None
        archive: Archive | None = None
        if entry is not None and path.exists():
            dirty = await is_dirty(run_git, path)
            # Without an environment there is no archive to save changes in: they are never removed.
            if dirty and (not request.force or ref is None):
                return _refused("uncommitted_changes", _uncommitted(path))
            if ref is not None:
                try:
                    archive = await save_archive(path, ref, request.branch)
                except GitError as error:  # e.g. its `.git` file broken: nothing is removed unsaved
                    return _refused("unreadable", _unreadable(path, error))
                if self.settings.archive_push:  # a failed push is logged; the local archive still holds it all
                    await push_archive(repository, ref, push_token(self.settings))
            if not await _remove_worktree(repository, path, force=archive is not None):
                return _refused("uncommitted_changes", _uncommitted(path))
            outcome: Literal["removed", "already_gone"] = "removed"
            note = f"Removed worktree `{path}` (branch `{request.branch}`)."
        else:
            # Gone from disk (or a retry after the removal itself): drop git's stale record of it.
            await run_git("worktree", "prune", cwd=repository)
            outcome = "already_gone"
            note = f"The worktree at `{path}` was already gone; git's record of it was pruned."
            archived = await read_archive(await archive_store(repository), ref) if ref is not None else None
            archive = archived[0] if archived is not None else None

        if archive is not None:
            restore = branch or request.branch
            return RemovalReport(
                outcome=outcome, branch_outcome="archived", archive_refs=[archive.ref], branch_tip=archive.head,
                message=f"{note} Everything in it, uncommitted and untracked files included, was archived as "
                        f"`{archive.ref}`, and its branch `{request.branch}` kept: `/worktree restore {restore}` "
                        f"brings it back for {self.settings.archive_retention_days} days."
                        + (f" {left_out_note(archive.left_out, 'the archive')}" if archive.left_out else ""),
            )
        branch_outcome, branch_note = await _settle_branch(request, branch, worktrees, path)
        return RemovalReport(outcome=outcome, branch_outcome=branch_outcome,
                             message=" ".join(part for part in (note, branch_note) if part))


def _refused(reason: Refusal, message: str) -> RemovalReport:
    return RemovalReport(outcome="refused", refused_because=reason, message=message)


def _unreadable(path: Path, error: GitError) -> str:
    return (f"git cannot read `{path}` ({error.stderr.splitlines()[-1] if error.stderr else 'no reason given'}), "
            "so it could not be archived and was not removed. Repair it (or move it away), then remove it again.")


def _uncommitted(path: Path) -> str:
    return (
        f"`{path}` has uncommitted changes, so it was not removed. Commit and push them, or use "
        "`/worktree remove --force` to remove it anyway: it is archived first, and `/worktree restore` "
        "brings it back with its changes."
    )


async def _remove_worktree(repository: Path, path: Path, force: bool) -> bool:
    """False when git refuses because the worktree has changes (made since we looked)."""
    args = ["worktree", "remove", *(["--force"] if force else []), "--", str(path)]
    result = await run_git(*args, cwd=repository, check=False)
    if result.returncode != 0 and await clear_stale_lock(repository, result.stderr):
        result = await run_git(*args, cwd=repository, check=False)  # a dead git's lock was in the way
    if result.returncode == 0:
        return True
    if "modified or untracked files" in result.stderr:
        return False
    # e.g. a worktree locked with `git worktree lock`: retrying cannot help
    raise ApplicationError(
        f"git could not remove the worktree `{path}`: {result.stderr.strip()}",
        type=WORKTREE_CONFLICT,
        non_retryable=True,
    )


async def _settle_branch(
    request: RemoveWorktreeInput, branch: str | None, worktrees: list[ListedWorktree], path: Path
) -> tuple[BranchOutcome, str]:
    """With no archive of the worktree: delete the branch when its work survives elsewhere and no
    archive refers to it; keep it otherwise."""
    if branch is None:
        return "absent", ""
    repository = Path(request.codebase.canonical_path)
    default = request.codebase.default_branch
    refs = await read_refs(run_git, repository, default)
    state = await branch_state(run_git, repository, refs, branch)
    if not state.exists:
        return "absent", ""
    if branch == default:
        return "kept", f"Branch `{branch}` was kept: it is the default branch."
    holder = next((other.path for other in worktrees if other.branch == branch and other.path != path), None)
    if holder is not None:
        return "kept", f"Branch `{branch}` was kept: it is checked out at `{holder}`."
    if archives := await archives_of_branch(repository, branch):
        return "kept", f"Branch `{branch}` was kept: the archive `{archives[0]}` refers to it."
    if state.merged:
        await run_git("branch", "-D", "--", branch, cwd=repository)
        return "deleted", f"Branch `{branch}` was deleted: its work is already in `{default}`."
    if state.found_on is not None:
        await run_git("branch", "-D", "--", branch, cwd=repository)
        return "deleted", f"Branch `{branch}` was deleted: its commits are still on `{state.found_on}`."
    return "kept", (
        f"Branch `{branch}` was kept: it has commits found on no other branch or remote. "
        f"Push it, or delete it with `git branch -D {branch}`."
    )
