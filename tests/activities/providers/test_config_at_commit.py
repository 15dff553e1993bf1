"""`.isolator.toml` at a commit, read once per process: each commit gives its own file. Real git."""

from __future__ import annotations

from pathlib import Path

from activities.providers.worktree.base import config_at_commit
from tests.gitrepos import git, make_repo


def commit_config(repo: Path, text: str) -> str:
    (repo / ".isolator.toml").write_text(text)
    git("add", ".isolator.toml", cwd=repo)
    git("commit", "-q", "-m", "config", cwd=repo)
    return git("rev-parse", "HEAD", cwd=repo).strip()


async def test_each_commit_gives_its_own_file_and_a_commit_without_one_gives_none(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project")
    without = git("rev-parse", "HEAD", cwd=repo).strip()
    first = commit_config(repo, '[setup]\ncommands = ["make"]\n')

    assert await config_at_commit(repo, first) == '[setup]\ncommands = ["make"]\n'
    second = commit_config(repo, '[setup]\ncommands = ["npm ci"]\n')

    assert await config_at_commit(repo, second) == '[setup]\ncommands = ["npm ci"]\n'
    assert await config_at_commit(repo, first) == '[setup]\ncommands = ["make"]\n'
    assert await config_at_commit(repo, without) is None
