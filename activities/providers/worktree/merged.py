"""Whether a branch's work is merged into the default branch or its upstream, and which check
proves it (merge_proof): ancestry, every commit by patch id, or a squash by `merge-tree`; a batch
that proves many branches unmerged at once (unmerged_by_paths); and whether another branch or
remote holds its commits (holder). The survey, the removal and `/worktree why` all ask here, so
merged means one thing everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from activities.git.runner import GitRunner


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
