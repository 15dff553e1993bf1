"""The state of a worktree as git objects: its HEAD, and a tree of every file in it as it is now
(uncommitted and untracked changes included, ignored files left out), built in a scratch index so
the worktree's own index and files are not touched.

The objects it writes (the blobs of uncommitted files, their trees) go into a private object store in
a folder of the caller's, which reads the shared store as its alternate: in the shared store, every
other conversation's run could read them (`git cat-file --batch-all-objects`). Comparing two states
needs the folder both were written in."""

from __future__ import annotations

import asyncio
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from activities.git.runner import admin_dir, run_git
from activities.git.staging import add_all

MAX_NAMES = 1000  # changed files kept of one comparison
# A run's patch for the run page: kept whole up to this size; a run that changed more lines than
# MAX_DIFF_LINES keeps only its file names (the patch of a generated file is no one's reading).
MAX_DIFF_BYTES = 256 * 1024
MAX_DIFF_LINES = 20_000


@dataclass
class WorkingTree:
    head: str | None  # None on a branch without commits
    tree: str
    left_out: list[str] = field(default_factory=list)  # nested repositories with no commit (staging.py)


def snapshot_objects(folder: Path, worktree: Path) -> dict[str, str]:
    """git's variables that write objects into `folder`'s own store, reading the worktree's shared one."""
    (folder / "objects").mkdir(parents=True, exist_ok=True)
    return {"GIT_OBJECT_DIRECTORY": str(folder / "objects"),
            "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(_common_dir(worktree) / "objects")}


def snapshot_folder(worktree: Path, name: str) -> Path:
    """A folder for snapshots that must outlast one activity: in the common git dir, which no run sees."""
    return _common_dir(worktree) / "isolator-snapshots" / name


def _common_dir(worktree: Path) -> Path:
    if (worktree / ".git").is_dir():
        return worktree / ".git"
    admin = admin_dir(worktree)
    if admin is None:
        raise FileNotFoundError(f"{worktree} is no git checkout")
    return (admin / (admin / "commondir").read_text().strip()).resolve()


@dataclass
class StagedTree:
    """A worktree's state staged in a scratch index, its tree not yet written: what must be taken
    before a program starts is taken; the tree (`git write-tree`) can be written after it."""

    path: Path
    head: str | None
    variables: dict[str, str]  # its scratch index and object store
    left_out: list[str]  # nested repositories with no commit (staging.py)

    async def written(self) -> WorkingTree:
        tree = (await run_git("write-tree", cwd=self.path, env=self.variables)).stdout.strip()
        return WorkingTree(self.head, tree, self.left_out)


async def staged_tree(path: Path, scratch: Path) -> StagedTree:
    """The scratch index (in the folder `scratch`, with the object store) starts as a copy of the
    worktree's own (when it can be found): `git add` then rereads only the files whose stat changed,
    and HEAD is asked meanwhile."""
    scratch.mkdir(parents=True, exist_ok=True)
    scratch_index = scratch / "index"
    scratch_index.unlink(missing_ok=True)
    own_index = _index_of(path)
    if own_index is not None and own_index.is_file():
        shutil.copyfile(own_index, scratch_index)
    variables = {"GIT_INDEX_FILE": str(scratch_index), **snapshot_objects(scratch, path)}
    asked, left_out = await asyncio.gather(
        run_git("rev-parse", "--verify", "--quiet", "HEAD", cwd=path, check=False),
        add_all(path, env=variables),
    )
    return StagedTree(path, asked.stdout.strip() or None, variables, left_out)


async def working_tree(path: Path, scratch: Path) -> WorkingTree:
    """The worktree's state, its objects written in `scratch`."""
    return await (await staged_tree(path, scratch)).written()


def _index_of(path: Path) -> Path | None:
    """The worktree's index: `.git/index`, or for a linked worktree the one in its admin dir."""
    if (path / ".git").is_dir():
        return path / ".git" / "index"
    admin = admin_dir(path)
    return admin / "index" if admin is not None else None


@dataclass
class Changes:
    files: list[str]  # paths whose content changed, appeared or went (at most MAX_NAMES)
    commits: int  # commits made on top of the earlier HEAD
    diff: str = ""  # the patch, before against after (see MAX_DIFF_BYTES)
    left_out: list[str] = field(default_factory=list)  # nested repositories with no commit, now (staging.py)


async def changes_since(path: Path, before: WorkingTree, scratch: Path) -> Changes:
    """What changed in the worktree since `before`, whose objects were written in `scratch`."""
    staged = await staged_tree(path, scratch)
    after = await staged.written()
    names = await run_git("diff-tree", "-r", "--name-only", "--no-renames", "-z", before.tree, after.tree, cwd=path,
                          env=staged.variables)
    files = [name for name in names.stdout.split("\0") if name][:MAX_NAMES]
    diff = await _patch(path, before.tree, after.tree, staged.variables) if files else ""
    commits = 0
    if after.head is not None and after.head != before.head:
        revisions = [after.head, f"^{before.head}"] if before.head is not None else [after.head]
        commits = int((await run_git("rev-list", "--count", *revisions, "--", cwd=path)).stdout.strip() or 0)
    return Changes(files, commits, diff, after.left_out)


async def _patch(path: Path, before: str, after: str, variables: dict[str, str]) -> str:
    """The patch between two trees, counted first so that a run that rewrote a huge file is not read whole."""
    counted = await run_git("diff-tree", "-r", "--numstat", "--no-renames", before, after, cwd=path, env=variables)
    lines = sum(int(added) + int(removed) for added, removed, *_ in
                (line.split("\t") for line in counted.stdout.splitlines()) if added.isdigit() and removed.isdigit())
    if lines > MAX_DIFF_LINES:
        return ""
    patch = await run_git("diff-tree", "-r", "-p", "--no-renames", "--no-color", "--no-ext-diff", "--no-textconv",
                          before, after, cwd=path, env=variables)
    return patch.stdout[:MAX_DIFF_BYTES]
