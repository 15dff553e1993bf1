"""Surveying a codebase's worktrees: which exist, which branches are merged or unpushed.

The removal activity asks the same questions about a single worktree (and whether it is dirty), so
the answers are computed here once. A survey costs three git processes whatever the number of worktrees: the listing, the
refs, and ancestry for every branch by one `for-each-ref --merged`. Beyond those, a branch with
work of its own not merged by ancestry gets a patch comparison (`git cherry`, and `merge-tree` for
a squash of several commits), unless its tip changes a path the base has not touched since the
branch forked: from four such branches, one batch of four processes proves that for all of them
(unmerged_by_paths). Only stale candidates of a planned cleanup are asked whether their commits are
unpushed (isolator/cleanup_rules.py names them); views (`/status`, lists) ask nothing more.

It reports facts, as git sees them; what they mean for the cleanup is decided in cleanup_rules.
"""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Awaitable, Protocol, TypeVar

from activities.disk_usage import disk_usage
from activities.git import GitResult, run_git
from activities.platforms.github import merged_at_tip
from isolator.cleanup_rules import is_fresh, needs_worktree_facts
from isolator.contracts.worktree import SCHEDULED_DISK_SECONDS, SurveyInput, WorktreeState, WorktreeSurvey
from isolator.settings import Settings

T = TypeVar("T")


class GitRunner(Protocol):
    """`run_git`'s signature; tests pass a wrapper around it that counts the processes."""

    async def __call__(self, *args: str, cwd: Path | str | None = None, check: bool = True) -> GitResult: ...


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


@dataclass(frozen=True)
class MergeBase:
    """The default branch or its upstream: work found in either counts as merged."""

    ref: str
    commit: str
    tree: str


@dataclass
class RefSnapshot:
    """The refs every merge question depends on, read once."""

    tips: dict[str, str]  # full refname -> commit, for refs/heads and refs/remotes
    bases: list[MergeBase]
    ancestry_merged: set[str]  # branch names whose tip is reachable from a base

    def ancestry_proof(self) -> str:
        names = " or ".join(f"`{_short(base.ref)}`" for base in self.bases)
        return f"its tip is an ancestor of {names}"


async def read_refs(git: GitRunner, repository: Path, default_branch: str) -> RefSnapshot:
    """Two git processes, whatever the number of branches."""
    listing = await git(
        "for-each-ref", "--format=%(refname)%00%(objectname)%00%(tree)%00%(upstream)",
        "refs/heads/", "refs/remotes/", cwd=repository,
    )
    tips: dict[str, str] = {}
    trees: dict[str, str] = {}
    upstreams: dict[str, str] = {}
    for line in listing.stdout.splitlines():
        refname, commit, tree, upstream = line.split("\0")
        tips[refname], trees[refname], upstreams[refname] = commit, tree, upstream
    default_ref = f"refs/heads/{default_branch}"
    upstream = upstreams.get(default_ref) or f"refs/remotes/origin/{default_branch}"
    bases = [MergeBase(ref, tips[ref], trees[ref]) for ref in (default_ref, upstream) if ref in tips]
    if len(bases) == 2 and bases[0].commit == bases[1].commit:
        bases.pop()
    if not bases:
        return RefSnapshot(tips, bases, set())
    merged_into = [argument for base in bases for argument in ("--merged", base.commit)]
    merged = await git("for-each-ref", "--format=%(refname)", *merged_into, "refs/heads/", cwd=repository)
    names = {line.removeprefix("refs/heads/") for line in merged.stdout.splitlines()}
    return RefSnapshot(tips, bases, names)


@dataclass(frozen=True)
class BranchState:
    exists: bool
    merge_proof: str | None = None  # which check found all its work in a base (merge_proof below)
    found_on: str | None = None  # another branch or remote ref holding its tip (short name)

    @property
    def merged(self) -> bool:
        return self.merge_proof is not None

    @property
    def unpushed(self) -> bool:
        """Commits that live only on this branch: deleting it would lose them."""
        return self.exists and not self.merged and self.found_on is None


async def branch_state(git: GitRunner, repository: Path, refs: RefSnapshot, branch: str) -> BranchState:
    """Everything about one branch: at most 2 git processes per base, and 1 to find another holder."""
    ref = f"refs/heads/{branch}"
    tip = refs.tips.get(ref)
    if tip is None:
        return BranchState(exists=False)
    if (proof := await merge_proof(git, repository, refs, branch, tip)) is not None:
        return BranchState(exists=True, merge_proof=proof)
    return BranchState(exists=True, found_on=await holder(git, repository, ref, tip))


async def merge_proof(git: GitRunner, repository: Path, refs: RefSnapshot, branch: str, tip: str) -> str | None:
    """Which check finds all the branch's work in a base, in words; None when none does.

    By ancestry (already read, no process), else by patch against each base: every commit's patch
    (a rebase merge, cherry-picks), or the whole change (a squash merge). One commit more than was
    merged fails all three.
    """
    if branch in refs.ancestry_merged:
        return refs.ancestry_proof()
    for base in refs.bases:
        if (proof := await _patch_proof(git, repository, base, tip)) is not None:
            return proof
    return None


async def holder(git: GitRunner, repository: Path, ref: str, tip: str) -> str | None:
    """Another branch or remote ref holding the tip, and so every commit of the branch (short name)."""
    holders = await git(
        "for-each-ref", "--format=%(refname:short)%00%(refname)", "--contains", tip,
        "refs/heads/", "refs/remotes/", cwd=repository,
    )
    others = [short for short, full in (line.split("\0") for line in holders.stdout.splitlines()) if full != ref]
    return others[0] if others else None


async def _patch_proof(git: GitRunner, repository: Path, base: MergeBase, tip: str) -> str | None:
    # Rebase merges and cherry-picks: every commit has an equivalent patch in base ('-' lines).
    cherry = await git("cherry", base.commit, tip, cwd=repository, check=False)
    commits = cherry.stdout.splitlines()
    if cherry.returncode == 0 and all(line.startswith("-") for line in commits):
        return f"every one of its {len(commits)} commit(s) is in `{_short(base.ref)}` by patch id (a rebase merge)"
    if cherry.returncode == 0 and len(commits) == 1:
        return None  # one commit: a squash of it would have had the same patch
    # A squash merge of several commits matches none of them one by one, but merging the branch
    # into base again then changes nothing: the merge result is base's own tree.
    merge = await git("merge-tree", "--write-tree", base.commit, tip, cwd=repository, check=False)
    if merge.returncode == 0 and merge.stdout.split("\n", 1)[0].strip() == base.tree:
        return f"its whole change is in `{_short(base.ref)}`: merging it again changes nothing (a squash merge)"
    return None


# From this many branches to compare, unmerged_by_paths first: its four processes cost less than
# a `git cherry` (and a `merge-tree`) each.
BATCH_FROM = 4
PATHS_PER_TIP = 8  # of a tip's changed paths, the ones tried
ARGUMENTS_ROOM = 256 * 1024  # bytes of paths on one command line, well within the system's limit


async def unmerged_by_paths(git: GitRunner, repository: Path, refs: RefSnapshot, tips: set[str]) -> set[str]:
    """Of the tips of branches not merged by ancestry, those that merge_proof would find unmerged,
    proven for all of them at once: one process for the tips and three per base, whatever their number.

    A tip commit with one parent that changes a path p that no commit of the base's side touched
    (every commit of the base not reachable from the common ancestor of the base and all these tips,
    merges against each parent, without rename detection) is merged neither by patch (its own patch,
    on p, matches no commit of that side: `git cherry` marks it `+`) nor by squash (the base's p is
    then the merge base's, so merging the tip takes the tip's p, which differs from the base's: the
    result is not the base's tree). When p is absent from the base, no folder of p may be gone from
    the base and touched on its side (a folder renamed on the base's side takes new files with it,
    and git counts a folder renamed only when it is gone). The others, and
    every tip when anything is unusual (a merge or root commit, a quoted path), get the usual checks.
    """
    if len(tips) < BATCH_FROM or not refs.bases:
        return set()
    listing = await git("-c", "core.quotePath=false", "log", "--no-walk=unsorted", "--no-renames", "--no-abbrev",
                        "--raw", "--format=%x01%H %P", *sorted(tips), cwd=repository, check=False)
    if listing.returncode != 0:
        return set()
    changes = _tip_changes(listing.stdout)
    proven = set(changes) & tips
    for base in refs.bases:
        if proven:
            proven = await _unmerged_into(git, repository, base, changes, proven)
    return proven


def _tip_changes(log: str) -> dict[str, dict[str, tuple[str, str]]]:
    """Each one-parent tip's changed paths (the first PATHS_PER_TIP), with their mode and object at the tip."""
    changes: dict[str, dict[str, tuple[str, str]]] = {}
    current: dict[str, tuple[str, str]] | None = None
    for line in log.splitlines():
        if line.startswith("\x01"):
            commit, *parents = line[1:].split()
            current = changes.setdefault(commit, {}) if len(parents) == 1 else None
        elif current is not None and line.startswith(":") and len(current) < PATHS_PER_TIP:
            meta, _, path = line.partition("\t")
            fields = meta.split()
            if len(fields) == 5 and path and not path.startswith('"'):
                current[path] = (fields[1], fields[3])
    return {commit: paths for commit, paths in changes.items() if paths}


def _folders(path: str) -> list[str]:
    parts = path.split("/")[:-1]
    return ["/".join(parts[:end]) for end in range(1, len(parts) + 1)]


async def _unmerged_into(git: GitRunner, repository: Path, base: MergeBase,
                         changes: dict[str, dict[str, tuple[str, str]]], tips: set[str]) -> set[str]:
    """Those of `tips` with a path (above) that proves them unmerged into `base`."""
    ancestors = await git("merge-base", "--octopus", base.commit, *sorted(tips), cwd=repository, check=False)
    if ancestors.returncode != 0 or not ancestors.stdout.split():
        return set()
    side = await git("-c", "core.quotePath=false", "log", "-m", "--no-renames", "--name-only", "--format=",
                     base.commit, "--not", *ancestors.stdout.split(), cwd=repository, check=False)
    if side.returncode != 0:
        return set()
    touched = {line for line in side.stdout.splitlines() if line}
    folders = {folder for path in touched for folder in _folders(path)}
    quoted = any(path.startswith('"') for path in touched)
    wanted: list[str] = []
    room = ARGUMENTS_ROOM  # the paths that do not fit are not asked about: their tips get the usual checks
    for path in sorted({path for tip in tips for path in changes[tip] if path not in touched}):
        room -= len(path) + 1
        if room < 0:
            break
        wanted.append(path)
    if not wanted:
        return set()
    # -t: the folders on the way to each path too, those the base has
    listing = await git("--literal-pathspecs", "-c", "core.quotePath=false", "ls-tree", "-r", "-t", "--full-tree",
                        base.commit, "--", *wanted, cwd=repository, check=False)
    if listing.returncode != 0:
        return set()
    at_base: dict[str, tuple[str, str]] = {}
    for line in listing.stdout.splitlines():
        meta, _, path = line.partition("\t")
        mode, _, object_id = meta.split()
        at_base[path] = (mode, object_id)
    asked = set(wanted)
    proven = set()
    for tip in tips:
        for path, (mode, object_id) in changes[tip].items():
            if path not in asked:
                continue
            there = at_base.get(path)
            if there is None and (set(mode) == {"0"} or any(
                    folder not in at_base and (quoted or folder in folders) for folder in _folders(path))):
                continue  # gone on both sides, or a folder of it gone from the base and touched: renamed?
            if there != (mode, object_id):
                proven.add(tip)
                break
    return proven


def _short(ref: str) -> str:
    return ref.removeprefix("refs/heads/").removeprefix("refs/remotes/")


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
        orphans = sorted(str(path) for path in linked - covered if path.is_relative_to(base) and path.is_dir())
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
        return request.ask_github and self.settings.github_token is not None
