"""Creating a worktree: idempotent, and a failure leaves nothing of its own making behind."""

from __future__ import annotations

import contextlib
import errno
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from temporalio.exceptions import ApplicationError

from activities.git.runner import (
    GitError,
    admin_dir,
    commits_of,
    is_valid_branch_name,
    run_git,
)
from activities.git.host_locks import host_lock
from activities.git.ownership import mark_as_made_here
from activities.git.paths import UnsafePathError, ensure_inside, worktree_path
from activities.git.stale_locks import run_git_recovering
from activities.providers.worktree.archive import archives_of_branch
from activities.providers.worktree.base import default_branch_setup, fresh_base
from activities.providers.worktree.include import copy_included
from activities.providers.worktree.removal_records import RemovalRecords
from activities.providers.worktree.start_points import fast_forward, start_point_of
from isolator.contracts.errors import (
    DISK_FULL,
    INVALID_BRANCH,
    UNSAFE_PATH,
    WORKTREE_CONFLICT,
)
from isolator.contracts.repository import WorktreeBase
from isolator.contracts.worktree import WorktreeReady, WorktreeRequest
from isolator.settings import Settings

PathState = Literal["missing", "ours", "half_made", "foreign"]


def is_healthy_worktree(path: Path) -> bool:
    """A cheap check (one stat): a linked worktree has a `.git` file."""
    return (path / ".git").is_file()


class WorktreeCreator:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    async def create(self, request: WorktreeRequest) -> WorktreeReady:
        """Create the worktree for `request.branch`, or return the one already there.

        Idempotent: a retry after a crash finds the finished worktree, or clears a half-made one
        and starts again. A failure leaves no directory and no branch of its own making behind.
        """
        repository = Path(request.codebase.canonical_path)
        branch = request.branch
        if not await is_valid_branch_name(branch):
            raise ApplicationError(f"`{branch}` is not a valid branch name", type=INVALID_BRANCH, non_retryable=True)
        try:
            path = worktree_path(self.settings.worktree_base, request.codebase.name, branch)
        except UnsafePathError as error:
            raise ApplicationError(str(error), type=UNSAFE_PATH, non_retryable=True) from None

        async with host_lock(self.settings.worktree_base, path):
            state = await _path_state(repository, path, branch)
            if state == "ours":
                mark_as_made_here(path)  # a crash may have come between the add and its mark
                await copy_included(repository, path, [])  # and the copy: what is there already stays
                return await self._already_made(repository, path, request)
            if state == "foreign":
                raise ApplicationError(
                    f"`{path}` already exists and is not a worktree of {request.codebase.name} on branch "
                    f"`{branch}`. Move it away or remove it, then send the message again.",
                    type=WORKTREE_CONFLICT,
                    non_retryable=True,
                )
            if state == "half_made":
                async with host_lock(self.settings.worktree_base, repository):
                    await self._clear_half_made(repository, path)
                _remove_empty_dir(self.settings.worktree_base, path)
            base = await fresh_base(self.settings.worktree_base, repository, request.codebase.default_branch,
                                    self.settings.fetch_interval_seconds)
            config = await default_branch_setup(repository, base, request.codebase.default_branch)
            start_point = await start_point_of(repository, request, base)
            # `lfs = "skip"`: a huge LFS repository's files stay pointers until asked for.
            checkout_env = {"GIT_LFS_SKIP_SMUDGE": "1"} if config.config.lfs == "skip" else {}
            added = await self._add(repository, path, branch, start_point, request.source, checkout_env)
            RemovalRecords(self.settings.worktree_base).forget(path)
            try:
                # Before the lock is let go: a message waiting to adopt a worktree here must see it is ours.
                mark_as_made_here(path)
                await copy_included(repository, path, config.config.include)
                config.gitmodules = (path / ".gitmodules").is_file()
            except OSError as error:
                if error.errno != errno.ENOSPC:
                    raise
                async with host_lock(self.settings.worktree_base, repository):
                    await self._undo_add(repository, path, branch, added.new_branch)
                raise self._disk_full(path) from None
            # A branch still at this commit later holds no work, however far the default branch moves.
            fresh = added.fresh and request.source == "default"
            return WorktreeReady(path=str(path), branch=branch, created=True,
                                 fresh_from=added.start_commit if fresh else None,
                                 base=WorktreeBase(request.codebase.default_branch, added.start_commit,
                                                   base.fallback_reason) if fresh and added.start_commit else None,
                                 setup=config)

    async def _clear_half_made(self, repository: Path, path: Path) -> None:
        """What a `git worktree add` killed part way left: git removes it, unless it died before its
        entry was written (git cannot read it then); its files then go by hand. Nobody ever worked there."""
        if (await run_git("worktree", "remove", "--force", "--force", "--", str(path), cwd=repository,
                          check=False)).returncode == 0:
            return
        common = Path((await run_git("rev-parse", "--path-format=absolute", "--git-common-dir",
                                     cwd=repository)).stdout.strip()).resolve()
        entry = _unfinished_entry(path, common)
        if entry is not None:
            shutil.rmtree(entry, ignore_errors=True)
            shutil.rmtree(ensure_inside(self.settings.worktree_base, path), ignore_errors=True)

    async def _already_made(self, repository: Path, path: Path, request: WorktreeRequest) -> WorktreeReady:
        """Made by a concurrent message (or by this one before a crash): a branch still at the base
        reads as the fresh branch it is, whichever message tells the user."""
        ready = WorktreeReady(path=str(path), branch=request.branch, created=False)
        if request.source != "default":
            return ready
        base = await fresh_base(self.settings.worktree_base, repository, request.codebase.default_branch,
                                self.settings.fetch_interval_seconds)
        tip, start = await commits_of(repository, f"refs/heads/{request.branch}", base.revision)
        if tip is None or tip != start:
            return ready  # work of its own by now: it is what it is
        ready.fresh_from = tip
        ready.base = WorktreeBase(request.codebase.default_branch, tip, base.fallback_reason)
        return ready

    async def _add(
        self, repository: Path, path: Path, branch: str, start_point: str, source: str, env: dict[str, str]
    ) -> _Added:
        """Add the worktree. Concurrent `git worktree add`s in one repository can trip over each
        other's `.git/worktrees` entries, so they take turns."""
        async with host_lock(self.settings.worktree_base, repository):
            return await self._add_locked(repository, path, branch, start_point, source, env)

    async def _add_locked(
        self, repository: Path, path: Path, branch: str, start_point: str, source: str, env: dict[str, str]
    ) -> _Added:
        existing, start_commit = await commits_of(repository, f"refs/heads/{branch}", start_point)
        new_branch, track = existing is None, source == "pr_branch"
        fresh = new_branch
        if (not new_branch and source == "default" and start_commit is not None and existing != start_commit
                and await archives_of_branch(repository, branch)):
            # A branch kept only for an archive (its worktree removed) with no work beyond the base: the
            # work starts again from the fresh base, as on a new branch. One with work of its own, or one
            # someone made by hand, stays as it is.
            await fast_forward(repository, branch, start_commit)
            [existing] = await commits_of(repository, f"refs/heads/{branch}")
            fresh = existing == start_commit
        if new_branch:
            tracking = ["--track"] if track else []
            # From the commit itself when it is known: it is the one recorded as where the branch started.
            start = start_point if track or start_commit is None else start_commit
            args = ["worktree", "add", *tracking, "-b", branch, "--", str(path), start]
        else:
            args = ["worktree", "add", "--", str(path), branch]
        path.parent.mkdir(parents=True, exist_ok=True)
        error = await _attempt(repository, args, env)
        # A worktree deleted behind git's back still holds its path and branch until it is pruned.
        if error is not None and await _pruned_stale_worktrees(repository):
            await self._undo_add(repository, path, branch, new_branch)
            error = await _attempt(repository, args, env)
        if error is not None:
            await self._undo_add(repository, path, branch, new_branch)
            if await _out_of_space(error, repository, start_point, path.parent):
                raise self._disk_full(path)
            raise ApplicationError(_explain(error, branch), type=WORKTREE_CONFLICT, non_retryable=True)
        return _Added(new_branch, fresh, start_commit)

    def _disk_full(self, path: Path) -> ApplicationError:
        free = shutil.disk_usage(self.settings.worktree_base).free
        return ApplicationError(
            f"the disk that holds the worktrees (`{self.settings.worktree_base}`) is full, so `{path.name}` could "
            f"not be checked out; nothing was left behind. Free some space ({free >> 20} MiB free now; "
            "`/worktree cleanup merged` or `stale` may help), then send the message again.",
            type=DISK_FULL, non_retryable=True,
        )

    async def _undo_add(self, repository: Path, path: Path, branch: str, new_branch: bool) -> None:
        """What a failed add made: a folder, and a new branch (git makes it before it checks the path)."""
        await run_git("worktree", "remove", "--force", "--force", "--", str(path), cwd=repository, check=False)
        _remove_empty_dir(self.settings.worktree_base, path)
        if new_branch:
            await run_git("branch", "-D", "--", branch, cwd=repository, check=False)


async def _attempt(repository: Path, args: list[str], env: dict[str, str]) -> GitError | None:
    try:
        # A git killed mid-way (a crash, a full disk) left a lock behind: cleared when nothing holds it.
        await run_git_recovering(repository, *args, cwd=repository, env=env)
        return None
    except GitError as error:
        return error


@dataclass(frozen=True)
class _Added:
    new_branch: bool  # made for this worktree
    fresh: bool  # at the start commit: new, or caught up with it
    start_commit: str | None  # where a new (or caught up) branch started


async def _pruned_stale_worktrees(repository: Path) -> bool:
    """Forget worktrees deleted behind git's back; True when there were any. Run only after a failed
    add, so that the usual add costs no prune."""
    result = await run_git("worktree", "prune", "--verbose", cwd=repository, check=False)
    return "Removing " in result.stderr


async def _path_state(repository: Path, path: Path, branch: str) -> PathState:
    if not path.exists():
        return "missing"
    if not (path / ".git").exists():
        return "half_made" if path.is_dir() and not any(path.iterdir()) else "foreign"
    expected = await run_git("rev-parse", "--path-format=absolute", "--git-common-dir", cwd=repository)
    common = Path(expected.stdout.strip()).resolve()
    if _unfinished_entry(path, common) is not None:  # git may not even read it yet (killed very early)
        return "half_made"
    result = await run_git(
        "rev-parse", "--path-format=absolute", "--git-common-dir", "--show-toplevel", "--abbrev-ref", "HEAD",
        cwd=path, check=False,
    )
    lines = result.stdout.splitlines()
    if result.returncode != 0 or len(lines) != 3:
        return "foreign"
    common_dir, toplevel, head = lines
    if Path(common_dir).resolve() != common or Path(toplevel).resolve() != path:
        return "foreign"
    return "ours" if head == branch else "foreign"


def _unfinished_entry(path: Path, common: Path) -> Path | None:
    """The entry (under `common`/worktrees) of `path` when it is a worktree of that repository that git
    has not finished adding: git keeps the entry locked "initializing" until the checkout is complete."""
    entry = admin_dir(path) or _entry_naming(path, common)
    if entry is None:  # a folder of its own, a repository of its own
        return None
    entry = entry.resolve()
    marker = entry / "locked"
    if entry.parent != common / "worktrees" or not marker.is_file():
        return None
    return entry if "initializing" in marker.read_text(errors="replace") else None


def _entry_naming(path: Path, common: Path) -> Path | None:
    """The entry whose `gitdir` names `path` while the folder holds only an empty `.git` file: git died
    between creating that file and writing it (nobody's work is there)."""
    pointer = path / ".git"
    if not pointer.is_file() or pointer.stat().st_size or [child.name for child in path.iterdir()] != [".git"]:
        return None
    for entry in (common / "worktrees").glob("*"):
        with contextlib.suppress(OSError):
            if Path((entry / "gitdir").read_text(errors="replace").strip()) == pointer:
                return entry
    return None


def _remove_empty_dir(base: Path, path: Path) -> None:
    with contextlib.suppress(OSError, UnsafePathError):
        ensure_inside(base, path).rmdir()


async def _out_of_space(error: GitError, repository: Path, start_point: str, folder: Path) -> bool:
    """git says so, or a write failed and the checkout's files need more than the filesystem has free
    (asked after the failed add was undone: git's own error does not name the cause)."""
    if "No space left on device" in error.stderr:
        return True
    if "unable to write" not in error.stderr and "short write" not in error.stderr:
        return False
    listing = await run_git("ls-tree", "-r", "-l", "--full-tree", start_point, cwd=repository, check=False)
    needed = sum(int(size) for size in (line.split()[3] for line in listing.stdout.splitlines()
                                        if line.split()[1] == "blob"))
    try:
        return needed >= shutil.disk_usage(folder).free
    except OSError:
        return False


def _explain(error: GitError, branch: str) -> str:
    if "already checked out" in error.stderr or "is already used by worktree" in error.stderr:
        return (
            f"Branch `{branch}` is already checked out in another worktree. "
            "Switch that worktree to another branch (or remove it), then send the message again."
        )
    if "invalid reference" in error.stderr or "not a valid" in error.stderr:
        return f"Could not create `{branch}`: a reference it needs does not exist ({error.stderr})."
    return f"Could not create the worktree for `{branch}`: {error.stderr}"
