"""Surveying a codebase's worktrees: which exist, which branches are merged or unpushed.

The removal activity asks the same questions about a single worktree (and whether it is dirty), so
the answers are computed here once. A survey costs three git processes whatever the number of worktrees: the listing, the
refs, and ancestry for every branch by one `for-each-ref --merged`. Beyond those, a branch with
work of its own not merged by ancestry gets a patch comparison (`git cherry`, and `merge-tree` for
a squash of several commits), unless its tip changes a path the base has not touched since the
branch forked: from four such branches, one batch of four processes proves that for all of them
(merged.py). Only stale candidates of a planned cleanup are asked whether their commits are
unpushed (isolator/cleanup_rules.py names them); views (`/status`, lists) ask nothing more.

It reports facts, as git sees them; what they mean for the cleanup is decided in cleanup_rules.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Awaitable, TypeVar

from activities.chat.platforms.github import merged_at_tip
from activities.git.disk_usage import disk_usage
from activities.git.runner import GitRunner, run_git
from activities.providers.worktree.merged import RefSnapshot, holder, merge_proof, read_refs, unmerged_by_paths
from activities.providers.worktree.warm import is_warm
from isolator.cleanup_rules import is_fresh, needs_worktree_facts
from isolator.contracts.worktree import SCHEDULED_DISK_SECONDS, SurveyInput, WorktreeState, WorktreeSurvey
from isolator.settings import Settings

T = TypeVar("T")


@dataclass(frozen=True)
class ListedWorktree:
    path: Path  # resolved
    branch: str | None  # None when detached
    main: bool  # the repository's own checkout, never removed
    prunable: bool = False  # its folder is gone: git forgets it at the next `git worktree prune`


async def list_worktrees(git: GitRunner, repository: Path) -> list[ListedWorktree]:
    """Every worktree git knows for `repository`, the main checkout first, including ones gone from disk."""
    listing = await git("worktree", "list", "--porcelain", cwd=repository)
    entries: list[ListedWorktree] = []
    resolved_folders: dict[str, str] = {}
    for block in listing.stdout.strip().split("\n\n"):
        lines = block.splitlines()
        path = next((line[len("worktree "):] for line in lines if line.startswith("worktree ")), None)
        ref = next((line[len("branch "):] for line in lines if line.startswith("branch ")), None)
        if path is not None:
            branch = ref.removeprefix("refs/heads/") if ref else None
            prunable = any(line.startswith("prunable") for line in lines)
            entries.append(ListedWorktree(_resolved(path, resolved_folders), branch, main=not entries,
                                          prunable=prunable))
    return entries


def _resolved(path: str, folders: dict[str, str]) -> Path:
    """`Path(path).resolve()`, resolving each folder once: a codebase's worktrees share theirs, and
    resolving hundreds of paths component by component cost more than the listing itself."""
    folder, name = os.path.split(path)
    if name in ("", ".", "..") or os.path.islink(path):
        return Path(os.path.realpath(path))
    if folder not in folders:
        folders[folder] = os.path.realpath(folder)
    return Path(folders[folder], name)


async def is_dirty(git: GitRunner, path: Path) -> bool:
    """Uncommitted or untracked changes, as `git worktree remove` would see them.

    A worktree git cannot read counts as dirty: nothing is removed on a guess.
    """
    # --no-optional-locks: an agent working in the worktree must not trip over our index.lock
    result = await git("--no-optional-locks", "status", "--porcelain", cwd=path, check=False)
    return result.returncode != 0 or bool(result.stdout.strip())


# How long one survey spends counting disk use, all its worktrees together: `/status` never waits longer.
# A worktree not counted in time shows its last count; a later `/status` counts it first.
DISK_SECONDS = 0.1
# A size counted this recently is shown again as it is, not counted anew (except by the scheduled cleanup).
SIZE_KEPT_SECONDS = 60.0
# Merge proofs (and sizes) kept per worker: enough for every branch of many large codebases.
PROOFS_KEPT = 100_000


def _measured(path: Path, deadline: float) -> int | None:
    """The worktree's disk use, if it can be counted before the survey's disk budget runs out."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        return None
    used, complete = disk_usage(path, remaining)
    return used if complete else None


# Git processes a survey runs at once: on two cores, four answer a codebase's questions in about
# two thirds of the time one at a time takes.
AT_ONCE = 4


async def _at_once(calls: list[Awaitable[T]]) -> list[T]:
    """Every call's result, in order, AT_ONCE of them running at a time; the first failure is raised
    as it is, once the others are cancelled (run_git kills its process then)."""
    gate = asyncio.Semaphore(AT_ONCE)

    async def gated(call: Awaitable[T]) -> T:
        async with gate:
            return await call

    tasks = [asyncio.ensure_future(gated(call)) for call in calls]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


class WorktreeSurveyor:
    """One per worker, so that what it learned is kept between surveys: a merge proof is a fact of a
    tip and the bases' commits, and a worktree's last size stands until it is counted again."""

    def __init__(self, settings: Settings, git: GitRunner = run_git) -> None:
        self.settings = settings
        self.git = git
        self._proofs: dict[tuple[str, tuple[str, ...], str], str | None] = {}
        self._sizes: dict[Path, tuple[int, float]] = {}  # bytes, and when they were counted (monotonic)

    async def survey(self, request: SurveyInput) -> WorktreeSurvey:
        """The state of every tracked worktree of a codebase, and the untracked ones under WORKTREE_BASE."""
        repository = Path(request.codebase.canonical_path)
        linked = {entry.path for entry in await list_worktrees(self.git, repository) if not entry.main}
        refs = await read_refs(self.git, repository, request.codebase.default_branch)
        tips = {tracked.branch: tip for tracked in request.tracked
                if (tip := refs.tips.get(f"refs/heads/{tracked.branch}")) is not None}
        # A fresh branch has nothing to compare: only ancestry, which costs nothing more.
        fresh = {tracked.branch for tracked in request.tracked
                 if is_fresh(tracked.start_commit, tips.get(tracked.branch))}
        proofs: dict[str, str | None] = {branch: refs.ancestry_proof() if branch in refs.ancestry_merged else None
                                         for branch in fresh if branch in tips}
        proofs.update(await self._merge_proofs(repository, refs, {b: t for b, t in tips.items() if b not in fresh}))
        folders: dict[str, str] = {}
        paths = {tracked.environment_id: _resolved(tracked.working_path, folders) for tracked in request.tracked}
        existing = {path for path in paths.values() if path in linked and path.is_dir()}
        sizes = self._disk_use(existing, request.disk_seconds or DISK_SECONDS) if request.measure_disk else {}
        states: list[WorktreeState] = []
        questions = []
        github_asked: set[str] = set()
        for tracked in request.tracked:
            path = paths[tracked.environment_id]
            exists = path in existing
            ref = f"refs/heads/{tracked.branch}"
            tip = tips.get(tracked.branch)
            if proofs.get(tracked.branch) is None and tip is not None and tracked.pull_request \
                    and tracked.branch not in github_asked and self._may_ask_github(request):
                github_asked.add(tracked.branch)
                proofs[tracked.branch] = await merged_at_tip(self.settings, tracked.pull_request, tip)
            proof = proofs.get(tracked.branch)
            is_merged_now = proof is not None
            state = WorktreeState(
                environment_id=tracked.environment_id,
                working_path=tracked.working_path,
                branch=tracked.branch,
                exists=exists,
                merged=is_merged_now,
                merge_proof=proof,
                unpushed=False,
                tip=tip,
                disk_bytes=sizes.get(path),
            )
            states.append(state)
            if request.plans_cleanup and exists and needs_worktree_facts(tracked, is_merged_now, tip):
                questions.append(self._unpushed(state, repository, ref))
        await _at_once(questions)
        base = self.settings.worktree_base.resolve()
        covered = set(paths.values())
        orphans = sorted(str(path) for path in linked - covered
                         if path.is_relative_to(base) and path.is_dir() and not is_warm(base, path))
        return WorktreeSurvey(states=states, orphans=orphans)

    async def _merge_proofs(self, repository: Path, refs: RefSnapshot, compared: dict[str, str]) -> dict[str, str | None]:
        """Each branch's merge proof (None: unmerged), asked of git only for tips not seen with these bases:
        the batch first (unmerged_by_paths), then the per-branch checks, four at a time."""
        bases = (str(repository), tuple(base.commit for base in refs.bases))
        unknown = {branch: tip for branch, tip in compared.items() if (*bases, tip) not in self._proofs}
        unmerged = await unmerged_by_paths(
            self.git, repository, refs, {tip for branch, tip in unknown.items() if branch not in refs.ancestry_merged})
        asked = [(branch, tip) for branch, tip in unknown.items() if tip not in unmerged]
        found = await _at_once([merge_proof(self.git, repository, refs, branch, tip) for branch, tip in asked])
        if len(self._proofs) > PROOFS_KEPT:
            self._proofs.clear()
        self._proofs.update({(*bases, tip): None for tip in unmerged})
        self._proofs.update({(*bases, tip): proof for (_, tip), proof in zip(asked, found)})
        return {branch: self._proofs[(*bases, tip)] for branch, tip in compared.items()}

    def _disk_use(self, paths: set[Path], seconds: float) -> dict[Path, int | None]:
        """Each worktree's size: those not counted in the last SIZE_KEPT_SECONDS (the scheduled cleanup
        counts them all again) counted anew, the longest ago (or never) first, until the time budget runs
        out; the others keep their last count. None: never counted yet."""
        now = time.monotonic()
        deadline = now + seconds
        sizes: dict[Path, int | None] = {}
        for path in sorted(paths, key=lambda path: self._sizes.get(path, (0, -1.0))[1]):
            fresh = path in self._sizes and now - self._sizes[path][1] < SIZE_KEPT_SECONDS
            counted = None if fresh and seconds < SCHEDULED_DISK_SECONDS else _measured(path, deadline)
            if counted is not None:
                self._sizes[path] = (counted, time.monotonic())
            sizes[path] = self._sizes[path][0] if path in self._sizes else None
        if len(self._sizes) > PROOFS_KEPT:  # removed worktrees' counts, in the end
            self._sizes = {path: self._sizes[path] for path in paths if path in self._sizes}
        return sizes

    async def _unpushed(self, state: WorktreeState, repository: Path, ref: str) -> None:
        """A stale candidate's: is its work on no other branch or remote?"""
        state.unpushed = await holder(self.git, repository, ref, state.tip or "") is None

    def _may_ask_github(self, request: SurveyInput) -> bool:
        # Without a token GitHub allows 60 requests an hour: the git checks alone decide then.
        return request.ask_github and (self.settings.github_token is not None or self.settings.github_app_id is not None)
