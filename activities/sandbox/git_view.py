"""What git needs inside the sandbox, and only that: a per-run view of the repository.

A worktree's branch and every other conversation's branch live in one common git dir (with the
archive store, activities/providers/worktree/archive_store.py, and `refs/isolator/kept/*`). The
program in the sandbox must commit on its own branch, yet must change nothing else there. So it never sees the real common dir: in its place (bound at the same path) it
sees a per-run scratch copy, the "view":

- `refs/` and `packed-refs`: copies, without `refs/isolator/*` (the archives are not even named);
- `objects/`: empty and private, with the shared object store, read-only, as its alternate: what it
  reads comes from the store, what it writes stays in the view;
- `config`, `HEAD`, `shallow`: copies; `hooks/`, `info/`: the real ones, read-only; `worktrees/<id>/`:
  a copy of the worktree's own admin dir (HEAD, index), so its HEAD and index are its own too;
- `worktrees/<id>/modules`: the real one, writable, where submodules of the set-up are cloned.

When the program has ended, the service (outside) takes ONE thing back: the worktree's own branch.
The objects the new tip needs are packed out of the view and indexed into the shared store (which
checks every object's hash), the store is checked to hold everything the tip reaches, and only then
`refs/heads/<branch>` moves, compare-and-swap from its value at the start. Every other ref change,
the view's index and config, are dropped with the view. The worktree's `.git` file is restored
if the program rewrote it, since the service runs git there afterwards.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from activities.git.runner import git_environment

ARCHIVE_REFS = "refs/isolator/"
SHARED_OBJECTS = "shared-objects"  # where the real object store is bound inside the view, read-only
_OID = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


class UntrustedGitLayout(Exception):
    """The worktree's `.git` points somewhere the program could have written: not used."""


@dataclass
class GitView:
    worktree: Path
    common: Path  # the real common git dir
    admin: Path  # the worktree's real admin dir (`<common>/worktrees/<id>`), or `common` for a main checkout
    dot_git: bytes  # the worktree's `.git` file as the service made it (b"" for a main checkout's directory)
    view: Path  # the per-run copy bound over `common`
    branch: str | None  # `refs/heads/...` that HEAD named at the start; None when detached
    start: str | None  # its value at the start
    binds: list[tuple[str, Path, Path]] = field(default_factory=list)  # (bwrap option, source, target)

    @property
    def admin_in_view(self) -> Path:
        return self.view if self.admin == self.common else self.view / "worktrees" / self.admin.name


def git_layout(worktree: Path) -> tuple[Path, Path, bytes] | None:
    """(common dir, admin dir, `.git` file) of a worktree; None when it is no git checkout."""
    dot_git = worktree / ".git"
    if dot_git.is_dir() and not dot_git.is_symlink():
        return dot_git, dot_git, b""
    if not dot_git.is_file():
        return None
    content = dot_git.read_bytes()
    match = re.match(rb"gitdir: (.+)\n?$", content)
    if match is None:
        return None
    admin = (worktree / os.fsdecode(match.group(1))).resolve()
    common = (admin / (admin / "commondir").read_text().strip()).resolve()
    # git's own back-link: another worktree's admin dir would hand this run another branch.
    if Path((admin / "gitdir").read_text().strip()).resolve() != dot_git.resolve():
        raise UntrustedGitLayout(f"{dot_git} does not point at this worktree's own admin dir")
    return common, admin, content


def prepare(worktree: Path, scratch: Path, untrusted: list[Path]) -> GitView | None:
    """Build the view of `worktree`'s repository in `scratch` (empty, made by the caller).
    `untrusted`: folders the program can write; a git dir inside one of them is refused."""
    layout = git_layout(worktree)
    if layout is None:
        return None
    common, admin, dot_git = layout
    for path in (common, admin):
        if any(path == place or place in path.parents for place in untrusted):
            raise UntrustedGitLayout(f"the git dir {path} lies where the program can write")
    view = scratch / "git"
    view.mkdir()
    branch, start = _head(admin, common)
    git = GitView(worktree, common, admin, dot_git, view, branch, start)
    _copy_refs(common, view)
    for name in ("HEAD", "config", "shallow"):
        _copy_file(common / name, view / name)
    objects = view / "objects"
    (objects / "info").mkdir(parents=True)
    (objects / "pack").mkdir()
    (view / SHARED_OBJECTS).mkdir()
    (objects / "info" / "alternates").write_text(f"{common / SHARED_OBJECTS}\n")
    git.binds = [("--bind", view, common), ("--ro-bind", common / "objects", common / SHARED_OBJECTS)]
    for shared in ("hooks", "info"):  # read as they are: bound, not copied
        if (common / shared).is_dir():
            (view / shared).mkdir()
            git.binds.append(("--ro-bind", common / shared, common / shared))
    if admin != common:
        own = git.admin_in_view
        own.mkdir(parents=True)
        for entry in admin.iterdir():
            if not entry.name.endswith(".lock"):  # another git's write under way
                _copy_file(entry, own / entry.name)
        if (worktree / ".gitmodules").is_file():
            (admin / "modules").mkdir(exist_ok=True)
            (own / "modules").mkdir()
            git.binds.append(("--bind", admin / "modules", common / "worktrees" / admin.name / "modules"))
    else:
        _copy_file(common / "index", view / "index")
    return git


def _head(admin: Path, common: Path) -> tuple[str | None, str | None]:
    head = (admin / "HEAD").read_text().strip()
    if head.startswith("ref: refs/heads/"):
        branch = head[len("ref: "):]
        return branch, read_ref(common, branch)
    return None, head if _OID.match(head) else None


def read_ref(git_dir: Path, name: str) -> str | None:
    """A branch's value as git stores it: the loose file, else its line in packed-refs; None when
    missing or not a plain object id (a symbolic ref is not taken)."""
    loose = git_dir / name
    if loose.is_file() and not loose.is_symlink():
        value = loose.read_text(errors="replace").strip()
        return value if _OID.match(value) else None
    packed = git_dir / "packed-refs"
    if packed.is_file():
        for line in packed.read_text(errors="replace").splitlines():
            oid, _, ref = line.partition(" ")
            if ref == name and _OID.match(oid):
                return oid
    return None


def _copy_refs(common: Path, view: Path) -> None:
    """The refs as they are now, while other runs' git may be changing them: a ref being written (its
    `.lock`) is read as it was, one deleted or packed meanwhile is read from `packed-refs`, copied last."""
    refs = common / "refs"
    for folder, folders, files in os.walk(refs):  # a folder that vanishes meanwhile is passed over
        here = Path(folder)
        if here == refs:
            folders[:] = [name for name in folders if name != "isolator"]
        target = view / "refs" / here.relative_to(refs)
        target.mkdir(parents=True, exist_ok=True)
        for name in [*files, *(name for name in folders if (here / name).is_symlink())]:
            if not name.endswith(".lock"):
                _copy_ref(here / name, target / name)
    packed = common / "packed-refs"
    lines, hidden = [], False
    if packed.is_file():
        for line in packed.read_text(errors="replace").splitlines(keepends=True):
            if line.startswith("^"):  # the peeled value of the line before
                if not hidden:
                    lines.append(line)
                continue
            hidden = line.split(" ", 1)[-1].startswith(ARCHIVE_REFS)
            if not hidden:
                lines.append(line)
    # Always a file: bound over or not, the program may rewrite it in its own view only.
    (view / "packed-refs").write_text("".join(lines))


def _copy_ref(source: Path, target: Path) -> None:
    try:
        if source.is_symlink():
            target.symlink_to(os.readlink(source))  # as git left it; followed, if at all, inside the view
        else:
            shutil.copyfile(source, target)
    except FileNotFoundError:
        pass  # deleted meanwhile: a branch removed, or packed (then in `packed-refs`)


def _copy_file(source: Path, target: Path) -> None:
    if source.is_file() and not source.is_symlink():
        try:
            shutil.copyfile(source, target)
        except FileNotFoundError:
            pass  # deleted meanwhile


class BranchNotTaken(Exception):
    """The program's commits stay out of the shared repository; the message says why."""


async def take_back(git: GitView) -> str | None:
    """After the run: the worktree's `.git` restored, and its own branch moved to what the program
    left on it (its new objects checked into the shared store first). Returns the new tip, or None
    when the branch did not move."""
    restore_dot_git(git)
    if git.branch is None or git.start is None:
        return None
    new = read_ref(git.view, git.branch)
    if new is None or new == git.start:
        return None
    # The view's own alternates file is the program's to rewrite: the store is named here instead.
    (git.view / "objects" / "info" / "alternates").unlink(missing_ok=True)
    await _import_objects(git, new)
    await _git(git.common, "update-ref", "-m", "isolator: commits of a sandboxed run", "--", git.branch, new, git.start)
    await _git(git.worktree, "reset", "--quiet", "--mixed", work_tree=True)  # the index follows the new tip
    return new


async def _import_objects(git: GitView, new: str) -> None:
    scratch = {"GIT_OBJECT_DIRECTORY": str(git.view / "objects"),
               "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(git.common / "objects")}
    kind = (await _git(git.common, "cat-file", "-t", new, env=scratch)).strip()
    if kind != "commit":
        raise BranchNotTaken(f"{git.branch} names a {kind}, not a commit")
    listing = await _git(git.common, "rev-list", "--objects", new, "--not", "--all", env=scratch)
    wanted = "".join(line.split(" ", 1)[0] + "\n" for line in listing.splitlines())
    if wanted:
        pack = await _git_bytes(git.common, "pack-objects", "--stdout", stdin=wanted.encode(), env=scratch)
        await _git_bytes(git.common, "index-pack", "--stdin", stdin=pack)  # hashes every object again
    await _git(git.common, "rev-list", "--objects", new, "--not", "--all")  # all of it is in the store now


def restore_dot_git(git: GitView) -> None:
    """The program may have rewritten the worktree's `.git` file to point git elsewhere (at a config
    that runs commands): the service runs git there next, so it gets back the file it made."""
    if git.admin == git.common:
        return
    dot_git = git.worktree / ".git"
    if dot_git.is_file() and not dot_git.is_symlink() and dot_git.read_bytes() == git.dot_git:
        return
    if dot_git.is_dir() and not dot_git.is_symlink():
        shutil.rmtree(dot_git)
    else:
        dot_git.unlink(missing_ok=True)
    dot_git.write_bytes(git.dot_git)


async def _git(cwd: Path, *args: str, env: dict[str, str] | None = None, work_tree: bool = False) -> str:
    return (await _git_bytes(cwd, *args, env=env, work_tree=work_tree)).decode()


async def _git_bytes(cwd: Path, *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None,
                     work_tree: bool = False) -> bytes:
    where = ["-C", str(cwd)] if work_tree else ["--git-dir", str(cwd)]
    process = await asyncio.create_subprocess_exec(
        "git", *where, *args, env=git_environment(env),
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    out, err = await process.communicate(stdin)
    if process.returncode != 0:
        raise BranchNotTaken(f"git {args[0]} failed: {err.decode(errors='replace').strip()[:300]}")
    return out
