"""The service's `add --all` on real git: nested repositories are recorded at their HEAD, and one with
no commit to record is left out and named, never a reason for the whole `add` to fail."""

from __future__ import annotations

import shutil
from pathlib import Path

from activities.git.staging import add_all, left_out_note
from tests.gitrepos import git, make_repo


def nested_with_a_commit(path: Path) -> str:
    make_repo(path, files=1)
    return git("rev-parse", "HEAD", cwd=path).strip()


async def test_nested_repositories_are_recorded_at_their_head_and_empty_ones_are_left_out(tmp_path: Path) -> None:
    outer = make_repo(tmp_path / "outer")
    committed = nested_with_a_commit(outer / "lib")
    git("init", "-q", str(outer / "empty"), cwd=tmp_path)
    (outer / "empty" / "draft.txt").write_text("no commit holds me\n")
    (outer / "deep" / "er").mkdir(parents=True)
    git("init", "-q", str(outer / "deep" / "er" / "also-empty"), cwd=tmp_path)
    (outer / "new.txt").write_text("a plain new file\n")

    left_out = await add_all(outer)

    assert sorted(left_out) == ["deep/er/also-empty", "empty"]
    staged = git("ls-files", "--stage", cwd=outer)
    assert f"160000 {committed} 0\tlib" in staged
    assert "new.txt" in staged and "empty" not in staged and "deep/" not in staged


async def test_a_recorded_nested_repository_that_lost_its_commits_keeps_its_recorded_one(tmp_path: Path) -> None:
    outer = make_repo(tmp_path / "outer")
    committed = nested_with_a_commit(outer / "lib")
    await add_all(outer)
    git("commit", "-q", "-m", "lib", cwd=outer)
    shutil.rmtree(outer / "lib" / ".git")
    git("init", "-q", str(outer / "lib"), cwd=tmp_path)  # the agent starts it over

    assert await add_all(outer) == ["lib"]
    assert f"160000 {committed} 0\tlib" in git("ls-files", "--stage", cwd=outer)


def test_the_note_names_what_was_left_out() -> None:
    assert left_out_note([]) == ""
    assert left_out_note(["x"]) == "`x/` is a git repository with no commit: left out of the commit."
    assert left_out_note(["a", "b"], "the archive") == \
        "`a/`, `b/` are git repositories with no commit: left out of the archive."
