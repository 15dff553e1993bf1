"""The state of a worktree as git objects: its HEAD, and a tree of every file in it as it is now
(uncommitted and untracked changes included, ignored files left out), built in a scratch index so
the worktree's own index and files are not touched."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from activities.git.runner import admin_dir, run_git
from activities.git.staging import add_all

MAX_NAMES = 1000  # changed files kept of one comparison


@dataclass
class WorkingTree:
    head: str | None  # None on a branch without commits
    tree: str


@dataclass
class StagedTree:
    """A worktree's state staged in a scratch index, its tree not yet written: what must be taken
    before a program starts is taken; the tree (`git write-tree`) can be written after it."""

    path: Path
    head: str | None
    index: Path

    async def written(self) -> WorkingTree:
        variables = {"GIT_INDEX_FILE": str(self.index)}
        return WorkingTree(self.head, (await run_git("write-tree", cwd=self.path, env=variables)).stdout.strip())


async def staged_tree(path: Path, scratch: Path) -> StagedTree:
    """The scratch index (in the folder `scratch`) starts as a copy of the worktree's own (when it can
    be found): `git add` then rereads only the files whose stat changed, and HEAD is asked meanwhile."""
    scratch_index = scratch / "index"
    own_index = _index_of(path)
    if own_index is not None and own_index.is_file():
        shutil.copyfile(own_index, scratch_index)
    asked, _ = await asyncio.gather(
        run_git("rev-parse", "--verify", "--quiet", "HEAD", cwd=path, check=False),
        add_all(path, env={"GIT_INDEX_FILE": str(scratch_index)}),
    )
    return StagedTree(path, asked.stdout.strip() or None, scratch_index)


async def working_tree(path: Path) -> WorkingTree:
    with tempfile.TemporaryDirectory(prefix="isolator-tree-") as scratch:
        return await (await staged_tree(path, Path(scratch))).written()


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


async def changes_since(path: Path, before: WorkingTree) -> Changes:
    """What changed in the worktree since `before`, as git reports it."""
    after = await working_tree(path)
    names = await run_git("diff-tree", "-r", "--name-only", "--no-renames", "-z", before.tree, after.tree, cwd=path)
    files = [name for name in names.stdout.split("\0") if name][:MAX_NAMES]
    commits = 0
    if after.head is not None and after.head != before.head:
        revisions = [after.head, f"^{before.head}"] if before.head is not None else [after.head]
        commits = int((await run_git("rev-list", "--count", *revisions, "--", cwd=path)).stdout.strip() or 0)
    return Changes(files, commits)
