"""A worktree in every state git knows, and a fingerprint of it: what the archive tests compare
before a removal and after a restore; and git run in a codebase's archive store, where the archives are."""

from __future__ import annotations

import os
from pathlib import Path

from activities.providers.worktree.archive_store import ARCHIVE_PREFIX, STORE
from tests.gitrepos import git


def archive_store_of(repository: Path) -> Path:
    common = git("rev-parse", "--path-format=absolute", "--git-common-dir", cwd=repository).strip()
    return Path(common) / STORE


def archive_git(repository: Path, *args: str) -> str:
    """git in the archive store of `repository` (`show <ref>:<file>`, `for-each-ref`, ...)."""
    return git("--git-dir", str(archive_store_of(repository)), *args, cwd=repository)


def archive_refs(repository: Path) -> list[str]:
    """The archives of `repository`: none while its store is not made."""
    if not archive_store_of(repository).is_dir():
        return []
    return archive_git(repository, "for-each-ref", "--format=%(refname)", ARCHIVE_PREFIX).split()


def make_a_mess(path: Path) -> None:
    """Staged, unstaged, staged-then-edited, deleted, untracked, binary, executable, a symlink and an
    ignored file (which is not kept)."""
    (path / "file0.txt").write_text("unstaged edit\n")
    (path / "file1.txt").write_text("staged edit\n")
    git("add", "file1.txt", cwd=path)
    (path / "file1.txt").write_text("staged edit, then edited again\n")
    (path / "new-staged.txt").write_text("a new file, staged\n")
    git("add", "new-staged.txt", cwd=path)
    git("rm", "-q", "file2.txt", cwd=path)
    (path / "deep" / "er").mkdir(parents=True)
    (path / "deep" / "er" / "untracked.bin").write_bytes(bytes(range(256)) * 3)
    (path / "run.sh").write_text("#!/bin/sh\necho hi\n")
    os.chmod(path / "run.sh", 0o755)
    os.symlink("file0.txt", path / "link")
    (path / ".gitignore").write_text("*.log\n")
    (path / "debug.log").write_text("ignored\n")


def fingerprint(path: Path) -> dict[str, object]:
    """Every file but the ignored ones (content, mode, link target) and git's view of the changes."""
    files: dict[str, object] = {}
    for folder, subfolders, names in os.walk(path):
        subfolders[:] = [name for name in subfolders if name != ".git"]
        for name in names:
            full = Path(folder, name)
            relative = str(full.relative_to(path))
            if name == ".git" or relative == "debug.log":
                continue
            if full.is_symlink():
                files[relative] = ("link", os.readlink(full))
            else:
                files[relative] = (full.read_bytes(), os.stat(full).st_mode & 0o777)
    return {
        "files": files,
        "status": git("status", "--porcelain=v1", "--untracked-files=all", cwd=path),
        "staged": git("diff", "--cached", "--binary", cwd=path),
        "head": git("rev-parse", "HEAD", cwd=path).strip(),
        "branch": git("branch", "--show-current", cwd=path).strip(),
    }
