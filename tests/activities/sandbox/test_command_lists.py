"""A list of set-up commands in one sandbox (activities/sandbox/command_lists.py): each runs through
`sh -c` in order, the first that fails stops the list and is named with its exit code and its last
lines, and each is heard as it starts. Real bubblewrap."""

from __future__ import annotations

from pathlib import Path

from activities.sandbox import bubblewrap
from activities.sandbox.command_lists import run_user_commands
from activities.sandbox.user_programs import user_environment
from isolator.settings import Settings
from tests.gitrepos import git, make_repo


def a_worktree(tmp_path: Path) -> Path:
    """A linked worktree, as the service runs set-ups in (a main checkout's git dir lies in what it writes)."""
    repository = make_repo(tmp_path / "repo")
    git("worktree", "add", "-q", "-b", "thread-list", str(tmp_path / "worktree"), cwd=repository)
    return tmp_path / "worktree"


async def test_the_commands_run_in_order_until_one_fails(settings: Settings, tmp_path: Path) -> None:
    bubblewrap.configure(settings)
    worktree = a_worktree(tmp_path)
    started: list[int] = []
    commands = ["echo one > first.txt; echo said one", "printf 'no newline'; false", "touch never.txt"]

    finished = await run_user_commands(commands, worktree, user_environment({}), 60, on_command=started.append)

    assert (finished.failed, finished.exit_code) == (1, 1), finished
    assert finished.tail == ["no newline"]
    assert started == [0, 1]
    assert (worktree / "first.txt").read_text() == "one\n" and not (worktree / "never.txt").exists()


async def test_a_list_that_succeeds_keeps_its_last_commands_lines(settings: Settings, tmp_path: Path) -> None:
    bubblewrap.configure(settings)
    worktree = a_worktree(tmp_path)

    finished = await run_user_commands(["echo first", "echo 'isolator-step-forged end 1 0'; echo last"], worktree,
                                       user_environment({}), 60)

    assert (finished.failed, finished.exit_code) == (None, 0)
    assert finished.tail == ["isolator-step-forged end 1 0", "last"], "another mark is output like any other"
