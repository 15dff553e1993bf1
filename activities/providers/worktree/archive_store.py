"""The archive store: a bare repository of each codebase's own, `<common git dir>/isolator-archives`,
which holds the archives' refs (`refs/isolator/archive/<id>`) and every object only an archive reaches
(the blobs of uncommitted and untracked files, their trees, the archive's commits).

Why apart: a sandboxed run reads the shared object store (its view's alternate,
activities/sandbox/git_view.py), so whatever lies there every conversation's run can read, with `git
cat-file --batch-all-objects`. The store borrows from the shared store (its `objects/info/alternates`),
never the reverse, and lies in the common git dir, which no run sees: the view is bound over all of it.

What an archive shares with its branch's commit stays in the shared store, kept from git's gc by the
branch and by `refs/isolator/kept/<id>` there (that commit was on a shared branch anyway, and a run's
view names no `refs/isolator/*`); everything else it reaches is packed into the store, so a `git gc` of
the shared repository, which knows nothing of the store, takes none of it away. Every writer holds the
repository's host lock; a step killed halfway is done again whole by its retry.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from activities.git.runner import GitResult, run_git
from isolator.contracts.archive import ARCHIVE_STORE

STORE = ARCHIVE_STORE
ARCHIVE_PREFIX = "refs/isolator/archive/"
KEPT_PREFIX = "refs/isolator/kept/"  # in the shared repository: each archive's branch commit
_LOOSE_FOLDER = re.compile(r"[0-9a-f]{2}")


@dataclass(frozen=True)
class ArchiveStore:
    path: Path
    common: Path  # the codebase's common git dir, whose object store is the store's alternate

    @property
    def objects(self) -> Path:
        return self.path / "objects"

    @property
    def env(self) -> dict[str, str]:
        """For git run in a worktree: it reads both object stores and writes new objects into this one only."""
        return {"GIT_OBJECT_DIRECTORY": str(self.objects)}

    async def git(self, *args: str, check: bool = True, input: str | None = None) -> GitResult:
        return await run_git("--git-dir", str(self.path), *args, check=check, input=input)

    async def keep_branch_commit(self, ref: str, head: str | None) -> None:
        """The archive's branch commit kept in the shared repository, whatever becomes of the branch."""
        if head is not None:
            await run_git("--git-dir", str(self.common), "update-ref", kept_ref(ref), head)

    async def let_branch_commit_go(self, ref: str) -> None:
        await run_git("--git-dir", str(self.common), "update-ref", "-d", kept_ref(ref), check=False)


def kept_ref(ref: str) -> str:
    return KEPT_PREFIX + ref.removeprefix(ARCHIVE_PREFIX)


async def archive_store(checkout: Path) -> ArchiveStore:
    """The store of the repository of `checkout` (its main checkout or one of its worktrees), made when
    missing. The caller holds the repository's host lock."""
    store, object_format = await _located(checkout)
    if not store.path.is_dir():
        await _make(store, object_format)
    return store


async def made_archive_store(checkout: Path) -> ArchiveStore | None:
    """The store when it is made, else None: for readers that hold no lock (they never make it)."""
    store, _ = await _located(checkout)
    return store if store.path.is_dir() else None


async def _located(checkout: Path) -> tuple[ArchiveStore, str]:
    asked = await run_git("rev-parse", "--path-format=absolute", "--git-common-dir", "--show-object-format",
                          cwd=checkout)
    common, object_format = asked.stdout.split("\n")[:2]
    return ArchiveStore(Path(common) / STORE, Path(common)), object_format


async def _make(store: ArchiveStore, object_format: str) -> None:
    """Made whole beside its place, then moved there: a store at its place is complete, archives of an
    older version included (until then they lived in the shared repository, `refs/isolator/archive/`)."""
    making = ArchiveStore(store.path.with_name(f"{STORE}.new"), store.common)
    await run_git("init", "--bare", "--quiet", f"--object-format={object_format}", str(making.path))
    # Relative to the store's own `objects`: the repository may move, with its git dir.
    (making.objects / "info" / "alternates").write_text("../../objects\n")
    await _move_shared_archives(making)
    making.path.rename(store.path)


async def _move_shared_archives(store: ArchiveStore) -> None:
    """Archives saved in the shared repository move into the store: their objects packed into it, their
    refs written there, then deleted from the shared repository (their branch commits kept there). Their
    other objects stay in the shared store until git's gc prunes them (docs/lifecycle.md: how to at once):
    no prune is run here, where runs and creations go on meanwhile."""
    shared = ["--git-dir", str(store.common)]
    listing = await run_git(*shared, "for-each-ref", "--format=%(refname) %(objectname) %(parent)", ARCHIVE_PREFIX)
    moved = [(ref, commit, _head(parents)) for ref, commit, *parents in map(str.split, listing.stdout.splitlines())]
    if not moved:
        return
    await pack_own_objects(store, [(commit, head) for _, commit, head in moved])
    await store.git("update-ref", "--stdin", input="".join(f"update {ref} {commit}\n" for ref, commit, _ in moved))
    await run_git(*shared, "update-ref", "--stdin", input="".join(
        f"delete {ref} {commit}\n" + (f"update {kept_ref(ref)} {head}\n" if head else "")
        for ref, commit, head in moved))


def _head(parents: list[str]) -> str | None:
    """An archive's first parent is its branch's commit when it has two; with one, its branch had none."""
    return parents[0] if len(parents) > 1 else None


async def pack_own_objects(store: ArchiveStore, archives: list[tuple[str, str | None]]) -> str:
    """One pack in the store of what the archives (commit, branch's commit) reach beyond their branches'
    commits, wherever those objects lie now; its name. Each is held by the store from then on."""
    wanted = "".join(f"{commit}\n" + (f"^{head}\n" if head else "") for commit, head in archives)
    packed = await store.git("pack-objects", "--revs", "-q", str(store.objects / "pack" / "pack"), input=wanted)
    return packed.stdout.strip()


async def keep_only_archived_objects(store: ArchiveStore) -> None:
    """After archives were deleted: the store keeps one pack of what the remaining ones reach beyond their
    branches' commits, and nothing else. The new pack is whole before anything else goes."""
    listing = await store.git("for-each-ref", "--format=%(objectname) %(parent)", ARCHIVE_PREFIX)
    archives = [(commit, _head(parents)) for commit, *parents in map(str.split, listing.stdout.splitlines())]
    kept = f"pack-{await pack_own_objects(store, archives)}." if archives else None
    for file in sorted((store.objects / "pack").iterdir(), key=lambda file: file.suffix != ".idx"):
        if kept is None or not file.name.startswith(kept):
            file.unlink()  # the indexes first: git never finds an index whose pack is gone
    for folder in store.objects.iterdir():
        if _LOOSE_FOLDER.fullmatch(folder.name):
            shutil.rmtree(folder)
