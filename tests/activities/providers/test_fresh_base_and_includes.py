"""A new worktree starts from origin's current default branch, fetched at most once per interval, and
gets the checkout's untracked files that `.worktreeinclude` names; on real repositories."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from temporalio.testing import ActivityEnvironment

from activities.environments.isolation import IsolationActivities
from isolator.contracts.codebase import Codebase
from isolator.contracts.worktree import WorktreeReady, WorktreeRequest
from isolator.settings import Settings, load_settings
from tests.gitrepos import (
    clone_with_origin,
    git,
    log_git_fetches,
    make_repo,
    push_to_origin,
)

HOST = "test-host"


def settings_for(tmp_path: Path, interval: int = 60) -> Settings:
    return load_settings(data_dir=tmp_path / "data", worktree_base_setting=tmp_path / "worktrees", host=HOST,
                         fetch_interval_seconds=interval)


async def create(settings: Settings, checkout: Path, branch: str) -> WorktreeReady:
    codebase = Codebase(id="1", name="project", canonical_path=str(checkout), default_branch="main", host=HOST)
    return await ActivityEnvironment().run(IsolationActivities(settings).create_worktree,
                                           WorktreeRequest(codebase, branch))


@pytest.fixture
def fetches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shim, log = log_git_fetches(tmp_path)
    monkeypatch.setenv("PATH", f"{shim}{os.pathsep}{os.environ['PATH']}")
    return log


async def test_a_new_worktree_starts_from_the_commit_just_pushed_to_origin(tmp_path: Path) -> None:
    origin, checkout = clone_with_origin(tmp_path)
    settings = settings_for(tmp_path, interval=0)
    first = await create(settings, checkout, "issue-1")
    pushed = push_to_origin(origin, tmp_path, "moved-on")

    ready = await create(settings, checkout, "issue-2")

    assert git("rev-parse", "HEAD", cwd=Path(ready.path)).strip() == pushed
    assert ready.base is not None and (ready.base.commit, ready.base.fallback_reason) == (pushed, None)
    assert ready.fresh_from == pushed
    assert first.base is not None and first.base.commit != pushed
    assert git("rev-parse", "main", cwd=checkout).strip() != pushed, "the checkout's own branch is left alone"


async def test_twenty_creations_at_once_fetch_once(tmp_path: Path, fetches: Path) -> None:
    origin, checkout = clone_with_origin(tmp_path)
    pushed = push_to_origin(origin, tmp_path, "news")
    settings = settings_for(tmp_path)

    made = await asyncio.gather(*(create(settings, checkout, f"thread-{number}") for number in range(20)))

    assert fetches.read_text().splitlines() == ["fetch"]
    assert {git("rev-parse", "HEAD", cwd=Path(ready.path)).strip() for ready in made} == {pushed}


async def test_an_unreachable_origin_gives_the_local_branch_and_says_why(tmp_path: Path) -> None:
    _, checkout = clone_with_origin(tmp_path)
    git("remote", "set-url", "origin", str(tmp_path / "gone.git"), cwd=checkout)
    local = git("rev-parse", "main", cwd=checkout).strip()

    ready = await create(settings_for(tmp_path), checkout, "issue-3")

    assert git("rev-parse", "HEAD", cwd=Path(ready.path)).strip() == local
    assert ready.base is not None and ready.base.commit == local
    assert ready.base.fallback_reason is not None and "could not be reached" in ready.base.fallback_reason


async def test_worktreeinclude_copies_untracked_files_and_folders_and_links_stay_links(tmp_path: Path) -> None:
    checkout = make_repo(tmp_path / "project")
    outside = tmp_path / "outside-secret.txt"
    outside.write_text("never read\n")
    (checkout / ".gitignore").write_text(".env\nnode_modules/\nconfig/local.json\nlinked-out\n")
    git("add", ".gitignore", cwd=checkout)
    git("commit", "-q", "-m", "ignore", cwd=checkout)
    (checkout / ".worktreeinclude").write_text("# copied into every new worktree\n.env\nnode_modules\n"
                                               "config/local.json\nlinked-out\n")
    (checkout / ".env").write_text("TOKEN=local\n")
    (checkout / "node_modules" / "pkg" / "lib").mkdir(parents=True)
    (checkout / "node_modules" / "pkg" / "lib" / "index.js").write_text("module.exports = 1\n")
    (checkout / "node_modules" / "pkg" / "lib" / "index.js").chmod(0o640)
    os.symlink("lib/index.js", checkout / "node_modules" / "pkg" / "main.js")
    (checkout / "config").mkdir()
    (checkout / "config" / "local.json").write_text("{}\n")
    os.symlink(outside, checkout / "linked-out")  # a link that points out of the checkout

    ready = await create(settings_for(tmp_path), checkout, "issue-4")
    worktree = Path(ready.path)

    assert (worktree / ".env").read_text() == "TOKEN=local\n"
    assert (worktree / "config" / "local.json").read_text() == "{}\n"
    copied = worktree / "node_modules" / "pkg" / "lib" / "index.js"
    assert copied.read_text() == "module.exports = 1\n" and (copied.stat().st_mode & 0o777) == 0o640
    assert os.readlink(worktree / "node_modules" / "pkg" / "main.js") == "lib/index.js"
    assert (worktree / "linked-out").is_symlink(), "copied as a link"
    assert os.readlink(worktree / "linked-out") == str(outside), "never followed: the link itself"
    assert not (worktree / ".worktreeinclude").exists(), "the list itself is not listed"
    assert git("status", "--porcelain", cwd=worktree) == "", "what was copied is what git ignores"


async def test_a_worktree_a_concurrent_message_made_reads_as_fresh_from_the_same_base(tmp_path: Path) -> None:
    """Whichever message records it first tells the user: each names the same base."""
    _, checkout = clone_with_origin(tmp_path)
    settings = settings_for(tmp_path)

    made = await create(settings, checkout, "thread-burst")
    found = await create(settings, checkout, "thread-burst")

    assert (made.created, found.created) == (True, False)
    assert found.base == made.base and found.fresh_from == made.fresh_from is not None
