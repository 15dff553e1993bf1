"""Removing a worktree and settling its branch: the one removal every path uses (command, close, cleanup).

Nothing with uncommitted changes is removed without `force`, and no commit is lost: work found
nowhere else either keeps its branch or, with `force`, is saved under refs/isolator/archive/ first.
Retries are safe: each step checks what is already done.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from temporalio.exceptions import ApplicationError

from activities.git import is_valid_branch_name, run_git
from activities.git_locks import clear_stale_lock
from activities.locks import host_locks
from activities.paths import UnsafePathError, ensure_inside
from activities.providers.worktree.survey import (
    ListedWorktree,
    branch_state,
    is_dirty,
    list_worktrees,
    read_refs,
)
from activities.removal_records import RemovalRecords
from activities.working_trees import working_tree
from isolator.contracts.errors import WORKTREE_CONFLICT
from isolator.contracts.worktree import Refusal, RemovalReport, RemoveWorktreeInput
from isolator.settings import Settings

ARCHIVE_PREFIX = "refs/isolator/archive/"
# The snapshot commit is the service's own, whatever identity (if any) the host has configured.
_SNAPSHOT_IDENTITY = ["-c", "user.name=isolator", "-c", "user.email=isolator@localhost"]

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
        archive_refs: list[str] = []
        notes: list[str] = []
        if entry is not None and path.exists():
            dirty = await is_dirty(run_git, path)
            if dirty and not request.force:
                return _refused("uncommitted_changes", _uncommitted(path))
            if dirty:
                snapshot = await _snapshot(path, branch or path.name)
                archive_refs.append(snapshot)
                notes.append(
                    f"Its uncommitted changes were saved as `{snapshot}`: see them with `git show {snapshot}`, "
                    f"restore them in a checkout of `{request.branch}` with `git checkout {snapshot} -- .`."
                )
            if not await _remove_worktree(repository, path, force=dirty):
                return _refused("uncommitted_changes", _uncommitted(path))
            outcome: Literal["removed", "already_gone"] = "removed"
            notes.insert(0, f"Removed worktree `{path}`.")
        else:
            # Gone from disk (or a retry after the removal itself): drop git's stale record of it.
            await run_git("worktree", "prune", cwd=repository)
            outcome = "already_gone"
            notes.insert(0, f"The worktree at `{path}` was already gone; git's record of it was pruned.")

        branch_outcome, note, archived = await _settle_branch(request, branch, worktrees, path)
        archive_refs += archived
        if note:
            notes.append(note)
        return RemovalReport(
            outcome=outcome, branch_outcome=branch_outcome, archive_refs=archive_refs, message=" ".join(notes)
        )


def _refused(reason: Refusal, message: str) -> RemovalReport:
    return RemovalReport(outcome="refused", refused_because=reason, message=message)


def _uncommitted(path: Path) -> str:
    return (
        f"`{path}` has uncommitted changes, so it was not removed. Commit and push them, or use "
        "`/worktree remove --force` to remove it anyway (the changes are saved under "
        f"`{ARCHIVE_PREFIX}` first)."
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
) -> tuple[BranchOutcome, str, list[str]]:
    """Delete the branch when its work survives elsewhere; keep it, or archive it with force, when not."""
    if branch is None:
        return "absent", "", []
    repository = Path(request.codebase.canonical_path)
    default = request.codebase.default_branch
    refs = await read_refs(run_git, repository, default)
    state = await branch_state(run_git, repository, refs, branch)
    if not state.exists:
        return "absent", "", []
    if branch == default:
        return "kept", f"Branch `{branch}` was kept: it is the default branch.", []
    holder = next((other.path for other in worktrees if other.branch == branch and other.path != path), None)
    if holder is not None:
        return "kept", f"Branch `{branch}` was kept: it is checked out at `{holder}`.", []
    if state.merged:
        await run_git("branch", "-D", "--", branch, cwd=repository)
        return "deleted", f"Branch `{branch}` was deleted: its work is already in `{default}`.", []
    if state.found_on is not None:
        await run_git("branch", "-D", "--", branch, cwd=repository)
        return "deleted", f"Branch `{branch}` was deleted: its commits are still on `{state.found_on}`.", []
    if not request.force:
        return "kept", (
            f"Branch `{branch}` was kept: it has commits found on no other branch or remote. "
            f"Push it, or delete it with `git branch -D {branch}`."
        ), []
    archive = await _archive_branch(repository, branch, refs.tips[f"refs/heads/{branch}"])
    await run_git("branch", "-D", "--", branch, cwd=repository)
    return "archived", (
        f"Branch `{branch}` had commits found on no other branch or remote: they were saved as `{archive}` "
        f"and the branch was deleted. Restore it with `git branch {branch} {archive}`."
    ), [archive]


async def _archive_branch(repository: Path, branch: str, tip: str) -> str:
    # A retry after the archive was made but before the branch was deleted reuses that archive.
    existing = await run_git(
        "for-each-ref", "--format=%(refname)", "--points-at", tip, f"{ARCHIVE_PREFIX}{branch}-*", cwd=repository
    )
    for refname in existing.stdout.splitlines():
        if not refname.endswith("-wip"):
            return refname
    archive = f"{ARCHIVE_PREFIX}{branch}-{_timestamp()}"
    await run_git("update-ref", archive, tip, "", cwd=repository)  # "": the ref must not exist yet
    return archive


async def _snapshot(path: Path, label: str) -> str:
    """Save the worktree's uncommitted and untracked changes as a commit on top of HEAD, named after
    `label` (`git stash create` would leave the untracked files out)."""
    state = await working_tree(path)
    head, tree = state.head, state.tree
    # A retry after the snapshot was saved but before the worktree was removed reuses it.
    existing = await run_git(
        "for-each-ref", "--format=%(refname)%00%(tree)%00%(parent)", f"{ARCHIVE_PREFIX}{label}-*-wip", cwd=path
    )
    for line in existing.stdout.splitlines():
        refname, ref_tree, parent = line.split("\0")
        if (ref_tree, parent) == (tree, head):
            return refname
    message = f"isolator: uncommitted changes of {label} before its worktree was removed"
    parents = ["-p", head] if head else []
    made = await run_git(*_SNAPSHOT_IDENTITY, "commit-tree", tree, *parents, "-m", message, cwd=path)
    commit = made.stdout.strip()
    ref = f"{ARCHIVE_PREFIX}{label}-{_timestamp()}-wip"
    await run_git("update-ref", ref, commit, "", cwd=path)
    return ref


def _timestamp() -> str:
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
