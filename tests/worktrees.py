"""Worktrees made by hand in the tests: a codebase for a repository, a worktree added beside the service's, a commit in it."""

from __future__ import annotations

from pathlib import Path

from activities.git.runner import GitResult, run_git
from isolator.contracts.codebase import Codebase
from isolator.settings import Settings
from tests.gitrepos import git


def codebase_of(repository: Path) -> Codebase:
    return Codebase(id="1", name="project", canonical_path=str(repository), default_branch="main", host="test-host")


def add_worktree(settings: Settings, repository: Path, branch: str, commits: int = 0) -> Path:
    leaf = branch.replace("/", "-")  # as the service names worktree folders
    path = settings.worktree_base / "project" / leaf
    git("worktree", "add", "-q", "-b", branch, "--", str(path), "main", cwd=repository)
    for number in range(commits):
        commit(path, f"{leaf}-{number}.txt", f"{branch} work {number}\n")
    return path.resolve()


def commit(checkout: Path, name: str, text: str) -> str:
    (checkout / name).write_text(text)
    git("add", "--", name, cwd=checkout)
    git("commit", "-q", "-m", f"add {name}", cwd=checkout)
    return git("rev-parse", "HEAD", cwd=checkout).strip()


class CountingGit:
    """run_git itself, counting the processes it starts."""

    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self, *args: str, cwd: Path | str | None = None, check: bool = True) -> GitResult:
        self.calls += 1
        return await run_git(*args, cwd=cwd, check=check)
