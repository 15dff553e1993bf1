"""Archives: a worktree saved as one commit before it is removed, and brought back from it.

The archive of environment E is `refs/isolator/archive/E`, in the codebase's archive store
(archive_store.py: a repository of its own, which no sandboxed run sees; what an archive holds is
written there, never into the shared object store). Its tree is every file of the worktree as it was
(uncommitted and untracked changes included, ignored files left out); its first parent is the branch's
commit (HEAD) and its last parent a commit of the index, so what was staged comes back staged. The
branch itself stays while an archive refers to it; the retention prunes both.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from activities.git.runner import admin_dir, commits_of, run_git
from activities.git.staging import add_all
from activities.git.working_trees import WorkingTree
from activities.providers.worktree.archive_store import (
    ARCHIVE_PREFIX,
    ArchiveStore,
    archive_store,
    pack_own_objects,
)

# The archive commits are the service's own, whatever identity (if any) the host has configured.
_IDENTITY = ["-c", "user.name=isolator", "-c", "user.email=isolator@localhost"]
# Names the branch in each archive's message: a branch an archive refers to is never deleted.
_BRANCH_TRAILER = "Isolator-Branch: "
_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def archive_ref(environment_id: str) -> str:
    return f"{ARCHIVE_PREFIX}{environment_id}"


@dataclass(frozen=True)
class Archive:
    ref: str
    commit: str
    head: str | None  # the branch's commit when it was archived; None on a branch without commits
    left_out: tuple[str, ...] = ()  # nested repositories with no commit, not in it (activities/git/staging.py)


@dataclass(frozen=True)
class ArchivedTrees:
    files: str  # the tree of the worktree's files
    index: str  # the tree of its index (what was staged)
    head: str | None  # the tree of the branch's commit


async def save_archive(path: Path, ref: str, branch: str) -> Archive:
    """Save the worktree at `path` under `ref` in its archive store. A retry after the archive was made,
    with the worktree still on disk, saves what is there now: the same archive when nothing changed."""
    store = await archive_store(path)
    state, written, saved = await asyncio.gather(
        worktree_files(path, store),
        run_git("write-tree", cwd=path, check=False, env=store.env),  # fails while a merge is unresolved
        read_archive(store, ref),
    )
    index_tree = written.stdout.strip() if written.returncode == 0 else state.tree
    await store.keep_branch_commit(ref, state.head)
    if saved is not None and (saved[0].head, saved[1].files, saved[1].index) == (state.head, state.tree, index_tree):
        return replace(saved[0], left_out=tuple(state.left_out))
    head_parent = ["-p", state.head] if state.head else []
    index_message = "isolator: the index of an archived worktree"
    index_commit = (await run_git(*_IDENTITY, "commit-tree", index_tree, *head_parent, "-m", index_message,
                                  cwd=path, env=store.env)).stdout.strip()
    message = f"isolator: archive of {path.name} before its worktree was removed\n\n{_BRANCH_TRAILER}{branch}"
    commit = (await run_git(*_IDENTITY, "commit-tree", state.tree, *head_parent, "-p", index_commit,
                            "-m", message, cwd=path, env=store.env)).stdout.strip()
    await pack_own_objects(store, [(commit, state.head)])
    await store.git("prune-packed", "-q")  # the loose copies of what the pack holds now
    await store.git("update-ref", "-m", "isolator: archived before removal", ref, commit)
    return Archive(ref, commit, state.head, tuple(state.left_out))


async def worktree_files(path: Path, store: ArchiveStore) -> WorkingTree:
    """HEAD, and the tree of every file in the worktree as it is now, as activities/git/working_trees.py
    builds it (a scratch index, starting from a copy of the worktree's own), but with the new objects
    written into the store: never into the shared store, where any run could read them."""
    with tempfile.TemporaryDirectory(prefix="isolator-archive-") as scratch:
        scratch_index = Path(scratch) / "index"
        admin = path / ".git" if (path / ".git").is_dir() else admin_dir(path)
        if admin is not None and (admin / "index").is_file():
            shutil.copyfile(admin / "index", scratch_index)
        staging = {**store.env, "GIT_INDEX_FILE": str(scratch_index)}
        asked, left_out = await asyncio.gather(
            run_git("rev-parse", "--verify", "--quiet", "HEAD", cwd=path, check=False), add_all(path, env=staging))
        tree = (await run_git("write-tree", cwd=path, env=staging)).stdout.strip()
    return WorkingTree(asked.stdout.strip() or None, tree, left_out)


async def read_archive(store: ArchiveStore, ref: str) -> tuple[Archive, ArchivedTrees] | None:
    """The archive saved under `ref`, and its trees, in one git process; None when there is none."""
    asked = [f"{ref}^{{commit}}", f"{ref}^{{tree}}", f"{ref}^1", f"{ref}^2", f"{ref}^1^{{tree}}", f"{ref}^2^{{tree}}"]
    answers = (await store.git("cat-file", "--batch-check=%(objectname)", input="".join(f"{line}\n" for line in asked)))
    commit, files, first, second, first_tree, second_tree = [
        answer if _OBJECT_ID.fullmatch(answer) else None for answer in answers.stdout.splitlines()]
    if commit is None or files is None or first is None or first_tree is None:
        return None
    if second is None or second_tree is None:  # one parent, the index's: the branch had no commit
        return Archive(ref, commit, None), ArchivedTrees(files, first_tree, None)
    return Archive(ref, commit, first), ArchivedTrees(files, second_tree, first_tree)


async def archive_and_branch(store: ArchiveStore, repository: Path, ref: str,
                             branch: str) -> tuple[tuple[Archive, ArchivedTrees] | None, str | None]:
    """The archive (None when there is no such archive) and the branch's commit (None when it is gone)."""
    archive, (tip,) = await asyncio.gather(read_archive(store, ref), commits_of(repository, f"refs/heads/{branch}"))
    return archive, tip


async def fill_from_archive(store: ArchiveStore, worktree: Path, trees: ArchivedTrees) -> None:
    """A worktree added with `--no-checkout` gets the archive's index (with its stat data) and files:
    one checkout of the index, then only the files that differed from it written over, or deleted.
    What does not depend on the checkout (the list of differences, a scratch index of the files) is
    read meanwhile. Git reads the archive from the store; the objects the index names are copied into
    the shared store first, since the worktree's index is its repository's from then on."""
    if trees.index != trees.head:
        wanted = f"{trees.index}\n" + (f"^{trees.head}\n" if trees.head else "")
        await store.git("pack-objects", "--revs", "-q", str(store.common / "objects" / "pack" / "pack"), input=wanted)
    checkout = run_git("read-tree", "--reset", "-u", trees.index, cwd=worktree, env=store.env)
    if trees.files == trees.index:
        await checkout
        return
    with tempfile.TemporaryDirectory(prefix="isolator-restore-") as scratch:
        scratch_index = {**store.env, "GIT_INDEX_FILE": str(Path(scratch) / "index")}
        _, changed, _ = await asyncio.gather(
            checkout,
            run_git("diff-tree", "-r", "-z", "--no-renames", "--name-status", trees.index, trees.files, cwd=worktree,
                    env=store.env),
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


async def delete_archive(store: ArchiveStore, ref: str) -> bool:
    """False when it was already gone. Its objects stay in the store until
    archive_store.keep_only_archived_objects."""
    await store.let_branch_commit_go(ref)
    exists = await store.git("rev-parse", "--verify", "--quiet", ref, check=False)
    if exists.returncode != 0:
        return False
    await store.git("update-ref", "-d", ref)
    return True


async def archives_of_branch(repository: Path, branch: str) -> list[str]:
    """The archives that refer to `branch`. The caller holds the repository's host lock."""
    return await branch_archives(await archive_store(repository), branch)


async def branch_archives(store: ArchiveStore, branch: str) -> list[str]:
    """The archives in `store` that refer to `branch` (by the trailer their message carries)."""
    listing = await store.git("for-each-ref", "--format=%(refname)%00%(contents)%00", ARCHIVE_PREFIX)
    fields = listing.stdout.split("\0")
    return [refname.strip() for refname, contents in zip(fields[0::2], fields[1::2])
            if f"\n{_BRANCH_TRAILER}{branch}\n" in f"\n{contents.strip()}\n"]
