"""Archives: a worktree saved as one commit before it is removed, and brought back from it.

The archive of environment E is `refs/isolator/archive/E`. Its tree is every file of the worktree as
it was (uncommitted and untracked changes included, ignored files left out); its first parent is
the branch's commit (HEAD) and its last parent a commit of the index, so what was staged comes back
staged. The branch itself stays while an archive refers to it; the retention prunes both.
"""

from __future__ import annotations

import asyncio
import hashlib
import tempfile
from dataclasses import dataclass
from pathlib import Path

from activities.git.runner import commits_of, run_git
from activities.git.working_trees import working_tree

ARCHIVE_PREFIX = "refs/isolator/archive/"
# The archive commits are the service's own, whatever identity (if any) the host has configured.
_IDENTITY = ["-c", "user.name=isolator", "-c", "user.email=isolator@localhost"]
# Names the branch in each archive's message: a branch an archive refers to is never deleted.
_BRANCH_TRAILER = "Isolator-Branch: "


def archive_ref(environment_id: str) -> str:
    return f"{ARCHIVE_PREFIX}{environment_id}"


@dataclass(frozen=True)
class Archive:
    ref: str
    commit: str
    head: str | None  # the branch's commit when it was archived; None on a branch without commits


@dataclass(frozen=True)
class ArchivedTrees:
    files: str  # the tree of the worktree's files
    index: str  # the tree of its index (what was staged)


async def save_archive(path: Path, ref: str, branch: str) -> Archive:
    """Save the worktree at `path` under `ref`, replacing an older archive there: a retry after the
    archive was made, with the worktree still on disk, saves what is there now."""
    state = await working_tree(path)
    written = await run_git("write-tree", cwd=path, check=False)  # fails while a merge is unresolved
    index_tree = written.stdout.strip() if written.returncode == 0 else state.tree
    head_parent = ["-p", state.head] if state.head else []
    index_commit = (await run_git(*_IDENTITY, "commit-tree", index_tree, *head_parent,
                                  "-m", "isolator: the index of an archived worktree", cwd=path)).stdout.strip()
    message = f"isolator: archive of {path.name} before its worktree was removed\n\n{_BRANCH_TRAILER}{branch}"
    commit = (await run_git(*_IDENTITY, "commit-tree", state.tree, *head_parent, "-p", index_commit,
                            "-m", message, cwd=path)).stdout.strip()
    await run_git("update-ref", "-m", "isolator: archived before removal", ref, commit, cwd=path)
    return Archive(ref, commit, state.head)


async def existing_archive(repository: Path, ref: str) -> Archive | None:
    """The archive saved under `ref` (by an earlier attempt of a removal), or None."""
    shown = await run_git("show", "-s", "--format=%H %P", ref, "--", cwd=repository, check=False)
    if shown.returncode != 0 or not shown.stdout.strip():
        return None
    commit, *parents = shown.stdout.split()
    return Archive(ref, commit, parents[0] if len(parents) > 1 else None)  # one parent: no commit before


async def archive_and_branch(repository: Path, ref: str, branch: str) -> tuple[ArchivedTrees | None, str | None]:
    """The archive's trees (None when there is no such archive) and the branch's commit (None when it is
    gone), in one git process. The index is the archive's last parent: the second, or the only one on
    a branch that had no commit."""
    asked = await commits_of(repository, f"{ref}^{{tree}}", f"{ref}^2^{{tree}}", f"{ref}^1^{{tree}}",
                             f"refs/heads/{branch}", kind="")
    files, second, first, tip = asked
    if files is None or first is None:
        return None, tip
    return ArchivedTrees(files, second or first), tip


async def fill_from_archive(worktree: Path, trees: ArchivedTrees) -> None:
    """A worktree added with `--no-checkout` gets the archive's index (with its stat data) and files:
    one checkout of the index, then only the files that differed from it written over, or deleted.
    What does not depend on the checkout (the list of differences, a scratch index of the files) is
    read meanwhile."""
    checkout = run_git("read-tree", "--reset", "-u", trees.index, cwd=worktree)
    if trees.files == trees.index:
        await checkout
        return
    with tempfile.TemporaryDirectory(prefix="isolator-restore-") as scratch:
        scratch_index = {"GIT_INDEX_FILE": str(Path(scratch) / "index")}
        _, changed, _ = await asyncio.gather(
            checkout,
            run_git("diff-tree", "-r", "-z", "--no-renames", "--name-status", trees.index, trees.files, cwd=worktree),
            run_git("read-tree", trees.files, cwd=worktree, env=scratch_index),
        )
        fields = [field for field in changed.stdout.split("\0") if field]
        written = []
        for status, name in zip(fields[0::2], fields[1::2]):
            if status == "D":
                (worktree / name).unlink(missing_ok=True)
            else:
                written.append(name)
        if written:
            await run_git("checkout-index", "--force", "-z", "--stdin", cwd=worktree, env=scratch_index,
                          input="\0".join(written) + "\0")


def staging_path(worktree_base: Path, path: Path) -> Path:
    """Where a restore builds the worktree before it moves to `path`: a half-made restore is then
    never at the user's path, and a retry clears it."""
    return worktree_base.resolve() / ".restoring" / hashlib.sha256(str(path).encode()).hexdigest()[:24]


async def delete_archive(repository: Path, ref: str) -> bool:
    """False when it was already gone."""
    exists = await run_git("rev-parse", "--verify", "--quiet", ref, cwd=repository, check=False)
    if exists.returncode != 0:
        return False
    await run_git("update-ref", "-d", ref, cwd=repository)
    return True


async def archives_of_branch(repository: Path, branch: str) -> list[str]:
    """The archives that refer to `branch` (by the trailer their message carries)."""
    listing = await run_git("for-each-ref", "--format=%(refname)%00%(contents)%00", ARCHIVE_PREFIX, cwd=repository)
    fields = listing.stdout.split("\0")
    return [refname.strip() for refname, contents in zip(fields[0::2], fields[1::2])
            if f"\n{_BRANCH_TRAILER}{branch}\n" in f"\n{contents.strip()}\n"]
