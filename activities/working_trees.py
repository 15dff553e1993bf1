"""The state of a worktree as git objects: its HEAD, and a tree of every file in it as it is now
(uncommitted and untracked changes included, ignored files left out), built in a scratch index so
the worktree's own index and files are not touched."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from activities.git import run_git

MAX_NAMES = 1000  # changed files kept of one comparison


@dataclass
class WorkingTree:
    head: str | None  # None on a branch without commits
    tree: str


async def working_tree(path: Path) -> WorkingTree:
    head = (await run_git("rev-parse", "--verify", "--quiet", "HEAD", cwd=path, check=False)).stdout.strip() or None
    with tempfile.TemporaryDirectory(prefix="isolator-tree-") as scratch:
        scratch_index = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        if head is not None:
            await run_git("read-tree", "HEAD", cwd=path, env=scratch_index)
        await run_git("add", "--all", cwd=path, env=scratch_index)
        tree = (await run_git("write-tree", cwd=path, env=scratch_index)).stdout.strip()
    return WorkingTree(head, tree)


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
