"""A full disk during `git worktree add`: the user is told what happened, no half-made worktree,
branch or row is left, and the next message after space is freed succeeds.

WORKTREE_BASE is a small tmpfs of its own, filled by a file of another program; mounting one needs
root (as in CI's containers), or the test says why it cannot run."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

from isolator.settings import Settings
from tests.conftest import Stack
from tests.gitrepos import branches, git, make_repo, worktree_paths

SIZE_MIB = 16
ROUNDS = int(os.environ.get("ISOLATOR_SOAK_ROUNDS", "1"))


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount_point = tmp_path / "small-disk"
    mount_point.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SIZE_MIB}m", "tmpfs", str(mount_point)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {mounted.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "--lazy", str(mount_point)], check=False)


@pytest.fixture
def settings(settings: Settings, small_disk: Path) -> Settings:
    return settings.model_copy(update={"worktree_base_setting": small_disk / "worktrees"})


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """Six files of 1 MiB each: a checkout does not fit beside the filler."""
    repository = make_repo(tmp_path / "repos" / "big")
    for number in range(6):
        (repository / f"blob-{number}.bin").write_bytes(os.urandom(1 << 20))
    git("add", ".", cwd=repository)
    git("commit", "-q", "-m", "blobs", cwd=repository)
    return repository


def fill(disk: Path, leave_mib: int) -> Path:
    """Another program's file, leaving about `leave_mib` free."""
    filler = disk / "filler"
    free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
    filler.write_bytes(b"\0" * max(free - (leave_mib << 20), 0))
    return filler


async def test_a_full_disk_is_told_leaves_nothing_half_made_and_the_next_message_succeeds(
    stack: Stack, repo: Path, small_disk: Path
) -> None:
    await stack.register(repo)
    for attempt in range(ROUNDS):
        conversation = f"full-{attempt}"
        filler = fill(small_disk, leave_mib=2)
        failed = (await stack.say(conversation, "go"))["result"]
        assert failed["outcome"] == "failed"
        (reply,) = failed["replies"]
        assert reply.startswith("Could not set up a worktree: ") and "disk" in reply and "full" in reply, reply
        assert worktree_paths(repo) == []
        assert await stack.db.fetchval("SELECT count(*) FROM isolation_environments WHERE status = 'active'") == 0
        before = set(branches(repo))
        project = stack.settings.worktree_base / "project"
        leftovers = [entry.name for entry in project.iterdir()] if project.exists() else []
        assert leftovers == [], "no half-made worktree"

        filler.unlink()  # space is freed
        created = (await stack.say(conversation, "go"))["result"]
        assert created["outcome"] == "created", created
        assert Path(created["workingPath"], "blob-5.bin").stat().st_size == 1 << 20
        assert created["branch"] in branches(repo) and set(branches(repo)) - before == {created["branch"]}
        # Make room for the next round: each worktree takes 6 MiB of the 16.
        await stack.say(conversation, "/worktree remove --force")
