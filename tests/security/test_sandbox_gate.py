"""A program that must wait for something (the agent, for the worktree's state the run is measured
against) is held by bubblewrap (`--block-fd`) while the sandbox is made: it runs only once that is
done, and never when that fails. Real bubblewrap, real programs."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from pathlib import Path
from typing import Iterator

import pytest

from activities.sandbox import bubblewrap
from activities.sandbox.processes import live_members
from activities.sandbox.user_programs import run_user_program
from isolator.settings import load_settings
from tests.gitrepos import git, make_repo


@pytest.fixture
def worktree() -> Iterator[Path]:
    """A worktree out of /tmp (the sandbox's /tmp is its own), with the sandbox configured for it."""
    place = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="isolator-gate-test-"))
    repo = make_repo(place / "repo")
    tree = place / "worktrees" / "repo" / "gated"
    git("worktree", "add", "-q", "-b", "gated", str(tree), cwd=repo)
    yield tree
    shutil.rmtree(place, ignore_errors=True)


def configure(worktree: Path, mode: str) -> None:
    place = worktree.parents[2]
    bubblewrap.configure(load_settings(data_dir=place / "data", worktree_base_setting=place / "worktrees",
                                    workspace_path_setting=place / "workspace", sandbox=mode, database_url="unused"))


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "stat").read_bytes().rsplit(b")", 1)[1].split()[1] == str(pid).encode():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.mark.parametrize("mode", ["on", "off"])
async def test_the_program_runs_only_once_what_it_waits_for_is_done(worktree: Path, mode: str) -> None:
    configure(worktree, mode)
    spawned: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    async def flag_once_the_sandbox_is_made() -> None:
        if mode == "on":
            leader = await spawned
            while not children(leader):  # bubblewrap has made the namespace: unheld, the program runs now
                await asyncio.sleep(0.005)
            for _ in range(100):  # a program that was not held shows itself within this while
                assert not (worktree / "started").exists(), "the program started before it was let go"
                await asyncio.sleep(0.005)
        (worktree / "flag").write_text("written first\n")

    output = bytearray()

    async def keep(chunk: bytes) -> None:
        output.extend(chunk)

    finished = await run_user_program(["sh", "-c", ": > started; cat flag"], worktree, dict(os.environ), 60, on_output=keep,
                                      on_start=lambda group: spawned.done() or spawned.set_result(group),
                                      after=flag_once_the_sandbox_is_made())
    assert (finished.exit_code, output.decode()) == (0, "written first\n")


@pytest.mark.parametrize("mode", ["on", "off"])
async def test_when_what_it_waits_for_fails_the_program_never_runs(worktree: Path, mode: str) -> None:
    configure(worktree, mode)
    spawned: list[int] = []

    async def fails() -> None:
        raise RuntimeError("the worktree could not be read")

    async def ignore(chunk: bytes) -> None:
        pass

    with pytest.raises(RuntimeError, match="could not be read"):
        await run_user_program(["sh", "-c", "touch ran; sleep 600"], worktree, dict(os.environ), 60, on_output=ignore,
                               on_start=spawned.append, after=fails())
    assert not (worktree / "ran").exists()
    if mode == "off":
        assert spawned == [], "unconfined, nothing is started before"
    else:
        assert spawned and live_members(spawned[0]) == [], "nothing of the sandbox is left"


def _processes_naming(path: Path) -> list[int]:
    """Running processes whose command line names `path` (bubblewrap's do, whatever their group)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and str(path).encode() in (entry / "cmdline").read_bytes() \
                    and (entry / "stat").read_bytes().rsplit(b")", 1)[1].split()[0] != b"Z":
                found.append(int(entry.name))
        except OSError:
            continue
    return found


async def test_a_stop_while_the_sandbox_is_being_started_ends_it_whole_and_promptly(worktree: Path) -> None:
    """Stopped at every step of its start (a `/stop`, a worker shutting down): asyncio alone would kill
    bubblewrap only, and wait forever on the output pipes the held program still holds."""
    configure(worktree, "on")
    never = asyncio.Event()

    async def ignore(chunk: bytes) -> None:
        pass

    for steps in range(12):
        waiting = asyncio.ensure_future(never.wait())  # as the agent's snapshot is: a task of its own
        run = asyncio.create_task(run_user_program(
            ["sh", "-c", "touch ran; sleep 600"], worktree, dict(os.environ), 60, on_output=ignore,
            on_error=ignore, after=waiting))
        for _ in range(steps):
            await asyncio.sleep(0)
        run.cancel()
        done, _ = await asyncio.wait([run], timeout=30)
        assert done, f"stopped after {steps} steps of its start, the run never ended"
        assert run.cancelled()
        for _ in range(200):  # what was killed is reaped in a moment
            if not _processes_naming(worktree):
                break
            await asyncio.sleep(0.05)
        assert _processes_naming(worktree) == [], f"stopped after {steps} steps, its sandbox is left"
        waiting.cancel()
    assert not (worktree / "ran").exists()
