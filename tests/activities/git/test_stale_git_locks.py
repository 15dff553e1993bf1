"""A git killed mid-way leaves a lock: the next creation clears it when nothing holds it, and never
when a running process does. Real git, real processes."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from activities.environments.isolation import IsolationActivities
from activities.git.stale_locks import is_held
from isolator.contracts.codebase import Codebase
from isolator.contracts.worktree import WorktreeReady, WorktreeRequest
from isolator.settings import Settings, load_settings
from tests.gitrepos import branches, make_repo

HOST = "test-host"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings(data_dir=tmp_path / "data", worktree_base_setting=tmp_path / "worktrees", host=HOST)


async def create(settings: Settings, repository: Path, branch: str) -> WorktreeReady:
    codebase = Codebase(id="1", name="project", canonical_path=str(repository), default_branch="main", host=HOST)
    return await ActivityEnvironment().run(IsolationActivities(settings).create_worktree,
                                           WorktreeRequest(codebase, branch))


async def test_a_lock_left_by_a_dead_git_is_cleared_and_the_creation_goes_on(settings: Settings, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project")
    lock = repo / ".git" / "refs" / "heads" / "thread-crashed.lock"
    lock.write_text("")  # as a git killed while creating the branch leaves it

    ready = await create(settings, repo, "thread-crashed")

    assert ready.created and Path(ready.path).is_dir()
    assert "thread-crashed" in branches(repo)
    assert not lock.exists()


async def test_a_lock_a_running_process_holds_is_never_removed(settings: Settings, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "project")
    lock = repo / ".git" / "refs" / "heads" / "thread-busy.lock"
    lock.write_text("")
    holder = subprocess.Popen(["sh", "-c", f'exec 3<>"{lock}"; sleep 60'])
    try:
        for _ in range(100):
            if is_held(lock.resolve()):
                break
            subprocess.run(["sleep", "0.05"])
        assert is_held(lock.resolve())

        with pytest.raises(ApplicationError, match="thread-busy.lock"):
            await create(settings, repo, "thread-busy")

        assert lock.exists(), "a lock a running process holds stays"
        assert "thread-busy" not in branches(repo)
    finally:
        holder.kill()
        holder.wait()
