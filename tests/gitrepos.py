"""Real git repositories made in temporary folders."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from workflows.chat.agent_texts import no_agent

IDENTITY = ["-c", "user.name=Test", "-c", "user.email=test@example.invalid", "-c", "commit.gpgsign=false"]


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *IDENTITY, *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def make_repo(path: Path, files: int = 3, branch: str = "main") -> Path:
    path.mkdir(parents=True)
    git("init", "-q", "-b", branch, cwd=path)
    for number in range(files):
        (path / f"file{number}.txt").write_text(f"content {number}\n")
    git("add", ".", cwd=path)
    git("commit", "-q", "-m", "initial", cwd=path)
    return path


def worktree_paths(repository: Path) -> list[str]:
    """Paths of the linked worktrees git knows about (not the main checkout)."""
    listing = git("worktree", "list", "--porcelain", cwd=repository)
    paths = [line.split(" ", 1)[1] for line in listing.splitlines() if line.startswith("worktree ")]
    return paths[1:]


def branches(repository: Path) -> list[str]:
    return git("branch", "--format=%(refname:short)", cwd=repository).split()


def branch_with_commit(repository: Path, branch: str, file: str, text: str, message: str) -> str:
    """A new branch one commit ahead of the checkout's branch, which stays checked out; its commit."""
    current = git("rev-parse", "--abbrev-ref", "HEAD", cwd=repository).strip()
    git("checkout", "-q", "-b", branch, cwd=repository)
    (repository / file).write_text(text)
    git("add", file, cwd=repository)
    git("commit", "-q", "-m", message, cwd=repository)
    commit = git("rev-parse", "HEAD", cwd=repository).strip()
    git("checkout", "-q", current, cwd=repository)
    return commit


def created_reply(branch: str, repository: Path, default_branch: str = "main") -> str:
    """What the user is told when a new branch is made: where it started."""
    return f"Working in isolated branch `{branch}`{started_from(repository, default_branch)}"


def first_replies(branch: str, repository: Path, default_branch: str = "main") -> list[str]:
    """What a new conversation is told on its first message when no coding agent is configured (the
    tests' stack): where its new branch started, then, once per conversation, that no agent answers."""
    return [created_reply(branch, repository, default_branch), no_agent()]


def started_from(repository: Path, default_branch: str = "main") -> str:
    """Where new branches of the repository start, as replies say it. A repository without an origin
    starts from its local default branch, and the reply says why."""
    has_origin = subprocess.run(["git", "-C", str(repository), "remote", "get-url", "origin"],
                                capture_output=True).returncode == 0
    if has_origin:
        start = git("rev-parse", "--short=7", f"origin/{default_branch}", cwd=repository).strip()
        return f", from `{default_branch}` at `{start}`"
    start = git("rev-parse", "--short=7", default_branch, cwd=repository).strip()
    return f", from the local `{default_branch}` at `{start}` (the checkout has no `origin`, so nothing was fetched)"


def clone_with_origin(folder: Path) -> tuple[Path, Path]:
    """A bare origin in `folder`, and a checkout cloned from it (`folder/repos/project`) as the service's."""
    source = make_repo(folder / "source")
    origin = folder / "origin.git"
    git("clone", "-q", "--bare", str(source), str(origin), cwd=folder)
    checkout = folder / "repos" / "project"
    git("clone", "-q", str(origin), str(checkout), cwd=folder)
    return origin, checkout


def push_to_origin(origin: Path, folder: Path, name: str) -> str:
    """Someone else pushes a commit to origin's main, which the service's checkout does not have; its SHA."""
    elsewhere = folder / f"colleague-{name}"
    git("clone", "-q", str(origin), str(elsewhere), cwd=folder)
    (elsewhere / f"{name}.txt").write_text(f"{name}\n")
    git("add", ".", cwd=elsewhere)
    git("commit", "-q", "-m", name, cwd=elsewhere)
    git("push", "-q", "origin", "main", cwd=elsewhere)
    return git("rev-parse", "HEAD", cwd=elsewhere).strip()


def log_git_fetches(folder: Path) -> tuple[Path, Path]:
    """A `git` that notes each fetch in a log and runs the real git: (the folder to put first on PATH, the log)."""
    shim, log = folder / "shim", folder / "fetches"
    shim.mkdir()
    log.touch()
    real = shutil.which("git")
    (shim / "git").write_text(f'#!/bin/sh\ncase " $* " in *" fetch "*) echo fetch >> "{log}";; esac\nexec "{real}" "$@"\n')
    (shim / "git").chmod(0o755)
    return shim, log
