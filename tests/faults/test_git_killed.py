"""A real `git worktree add` SIGKILLed part way through (its branch made, its worktree entry locked
"initializing", its checkout half written, its index.lock left), at moments spread over its run:
the next creation of that worktree clears what the dead git left and makes it whole."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from temporalio.testing import ActivityEnvironment

from activities.environments.isolation import IsolationActivities
from activities.git.paths import worktree_path
from isolator.contracts.codebase import Codebase
from isolator.contracts.worktree import WorktreeRequest
from isolator.settings import Settings, load_settings
from tests.gitrepos import branches, git, make_repo

HOST = "test-host"
ROUNDS = int(os.environ.get("ISOLATOR_SOAK_ROUNDS", "1"))
FILES = 3000
DELAYS = [0.002, 0.01, 0.03, 0.06, 0.1]  # seconds into the add, one kill each (per round)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return load_settings(data_dir=tmp_path / "data", worktree_base_setting=tmp_path / "worktrees", host=HOST)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repository = make_repo(tmp_path / "project")
    folder = repository / "many"
    folder.mkdir()
    for number in range(FILES):
        (folder / f"file{number}.txt").write_text(f"{number}\n" * 20)
    git("add", ".", cwd=repository)
    git("commit", "-q", "-m", "many files", cwd=repository)
    return repository


def killed_add(repo: Path, path: Path, branch: str, after: float) -> None:
    """`git worktree add -b branch path main`, SIGKILLed `after` seconds in (or finished, if quicker)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    process = subprocess.Popen(["git", "-C", str(repo), "worktree", "add", "-q", "-b", branch, "--", str(path), "main"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    time.sleep(after)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()


async def test_a_worktree_add_killed_part_way_is_made_whole_by_the_next_creation(
    settings: Settings, repo: Path
) -> None:
    codebase = Codebase(id="1", name="project", canonical_path=str(repo), default_branch="main", host=HOST)
    activities = IsolationActivities(settings)
    for round_number in range(ROUNDS):
        for step, after in enumerate(DELAYS):
            branch = f"thread-killed-{round_number}-{step}"
            path = worktree_path(settings.worktree_base, "project", branch)
            killed_add(repo, path, branch, after)

            ready = await ActivityEnvironment().run(activities.create_worktree, WorktreeRequest(codebase, branch))

            assert ready.path == str(path), after
            assert git("rev-parse", "--abbrev-ref", "HEAD", cwd=path).strip() == branch
            assert git("status", "--porcelain", cwd=path) == "", f"a whole checkout (killed after {after} s)"
            assert len(list((path / "many").iterdir())) == FILES
            assert branch in branches(repo)
            locks = [lock for lock in (repo / ".git").rglob("*.lock")]
            assert locks == [], f"no lock of the dead git is left: {locks}"


async def test_a_worktree_add_killed_before_its_entry_was_written_is_made_whole(settings: Settings, repo: Path) -> None:
    """The moment git leaves most rarely: its worktree's `.git` written, its own entry not yet
    (`commondir` missing), so git itself cannot read the folder; its entry still locked "initializing"."""
    codebase = Codebase(id="1", name="project", canonical_path=str(repo), default_branch="main", host=HOST)
    branch = "thread-killed-early"
    path = worktree_path(settings.worktree_base, "project", branch)
    path.parent.mkdir(parents=True, exist_ok=True)
    git("worktree", "add", "-q", "-b", branch, "--", str(path), "main", cwd=repo)
    entry = repo / ".git" / "worktrees" / path.name
    (entry / "commondir").unlink()
    (entry / "locked").write_text("initializing")
    assert subprocess.run(["git", "rev-parse", "HEAD"], cwd=path, capture_output=True).returncode != 0

    ready = await ActivityEnvironment().run(IsolationActivities(settings).create_worktree,
                                            WorktreeRequest(codebase, branch))

    assert ready.path == str(path)
    assert git("rev-parse", "--abbrev-ref", "HEAD", cwd=path).strip() == branch
    assert git("status", "--porcelain", cwd=path) == ""
    assert not (repo / ".git" / "worktrees" / path.name / "locked").exists()


async def test_a_worktree_add_killed_while_writing_its_pointer_is_made_whole(settings: Settings, repo: Path) -> None:
    """git creates the worktree's `.git` file, then writes it: killed between the two (seen once in a
    loaded suite), the folder holds an empty `.git` and the entry, locked "initializing", names it."""
    codebase = Codebase(id="1", name="project", canonical_path=str(repo), default_branch="main", host=HOST)
    branch = "thread-killed-mid-write"
    path = worktree_path(settings.worktree_base, "project", branch)
    git("branch", "--", branch, "main", cwd=repo)
    entry = repo / ".git" / "worktrees" / path.name
    entry.mkdir(parents=True)
    (entry / "locked").write_text("initializing")
    (entry / "gitdir").write_text(f"{path / '.git'}\n")
    path.mkdir(parents=True)
    (path / ".git").write_text("")

    ready = await ActivityEnvironment().run(IsolationActivities(settings).create_worktree,
                                            WorktreeRequest(codebase, branch))

    assert ready.path == str(path)
    assert git("rev-parse", "--abbrev-ref", "HEAD", cwd=path).strip() == branch
    assert git("status", "--porcelain", cwd=path) == ""
    assert [line for line in git("worktree", "list", "--porcelain", cwd=repo).splitlines()
            if line.startswith("locked")] == []
