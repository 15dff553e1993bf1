"""MAX_WORKTREES_PER_CODEBASE end to end: the manual flow of the limits plan at the real default of 25,
then the stale and in-use cases and bursts of new conversations at a small limit."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from isolator.settings import Settings
from tests.archives import archive_git
from tests.chat_commands import active_rows, command, environment_of, say_one, task_path
from tests.conftest import Stack
from tests.gitrepos import branches, first_replies, started_from, worktree_paths
from tests.lifecycle import (
    backdate,
    commit_file,
    merge_into_main,
    status_of,
)
from workflows.naming import thread_branch

SMALL = 3


@pytest.fixture
def settings(settings: Settings, request: pytest.FixtureRequest) -> Settings:
    """The default limit (25), or the one a test asks for with `parametrize("settings", [n], indirect=True)`."""
    limit = getattr(request, "param", None)
    return settings.model_copy(update={"max_worktrees_per_codebase": limit}) if limit else settings


small_limit = pytest.mark.parametrize("settings", [SMALL], indirect=True, ids=[f"limit-{SMALL}"])


def limit_text(total: int, merged: int, stale: int, active: int, cleanup_stale: bool = False) -> str:
    options = ["• `/worktree cleanup stale` - Remove stale worktrees"] if cleanup_stale else []
    options += ["• `/worktree list` - See all worktrees", "• `/worktree remove <name>` - Remove specific worktree"]
    return (
        f"Worktree limit reached ({total}/{total}) for **project**.\n\n"
        f"**Status:**\n• {merged} merged (can auto-remove)\n• {stale} stale (no activity in 14+ days)\n"
        f"• {active} active\n\n**Options:**\n" + "\n".join(options)
    )


def created_text(stack: Stack, name: str) -> str:
    start = started_from(stack.tmp_path / "repos" / "project")
    return f"Created worktree `{task_path(stack, name)}` on branch `task-{name}`{start}. This conversation now works in it."


async def worktree_dirs(stack: Stack) -> list[str]:
    folder = stack.settings.worktree_base / "project"
    return sorted(entry.name for entry in folder.iterdir()) if folder.exists() else []


async def assert_nothing_created(stack: Stack, repo: Path, name: str, count: int) -> None:
    assert not task_path(stack, name).exists()
    assert f"task-{name}" not in branches(repo)
    assert len(await active_rows(stack)) == count and len(worktree_paths(repo)) == count
    assert await stack.db.fetchval("SELECT count(*) FROM isolation_environments WHERE workflow_id = $1", name) == 0


async def test_the_default_limit_of_25_the_manual_flow(stack: Stack, repo: Path) -> None:
    assert stack.settings.max_worktrees_per_codebase == 25, "this test runs at the real default"
    await stack.register(repo)
    for n in range(24):
        assert await say_one(stack, f"c{n:02}", f"/worktree create t{n:02}") == created_text(stack, f"t{n:02}")
    assert (await say_one(stack, "watcher", "/status")).splitlines()[3:7] == [
        "Worktrees: 24/25", "  • 0 merged (can auto-remove)", "  • 0 stale (14+ days inactive)", "  • 24 active",
    ]

    assert await say_one(stack, "c24", "/worktree create t24") == created_text(stack, "t24")
    assert len(await active_rows(stack)) == 25 and len(await worktree_dirs(stack)) == 25

    full = limit_text(25, merged=0, stale=0, active=25)
    assert await say_one(stack, "c25", "/worktree create t25") == full
    await assert_nothing_created(stack, repo, "t25", 25)
    chat = await stack.say("newcomer", "please fix the login bug")
    assert (chat["result"]["outcome"], chat["result"]["replies"]) == ("limit", [full])
    assert thread_branch("test:newcomer") not in branches(repo) and len(await worktree_dirs(stack)) == 25
    assert await environment_of(stack, "newcomer") is None

    # t00's work is merged into main and its conversation moved on: the next create makes room with it.
    commit_file(task_path(stack, "t00"), "feature.txt")
    merge_into_main(repo, "task-t00")
    await command(stack, "c00", "/worktree link task-t01")
    assert (await say_one(stack, "watcher", "/status")).splitlines()[3:5] == [
        "Worktrees: 25/25", "  • 1 merged (can auto-remove)",
    ]
    assert await command(stack, "c25", "/worktree create t25") == [
        "Cleaned up 1 merged worktree(s) to make room.", created_text(stack, "t25"),
    ]
    assert not task_path(stack, "t00").exists() and "task-t00" in branches(repo), "kept with its archive"
    assert await status_of(stack, "task-t00") == "destroyed"
    assert task_path(stack, "t25").is_dir() and len(await active_rows(stack)) == 25
    assert len(worktree_paths(repo)) == 25 and len(await worktree_dirs(stack)) == 25
    assert (await environment_of(stack, "c25"))["branch_name"] == "task-t25"


@small_limit
async def test_stale_worktrees_are_offered_for_cleanup_and_then_make_room(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    for n in range(SMALL):
        await command(stack, f"c{n}", f"/worktree create t{n}")
    await backdate(stack, "c1", 30)

    assert await say_one(stack, "late", "/worktree create extra") == limit_text(
        SMALL, merged=0, stale=1, active=SMALL - 1, cleanup_stale=True
    )
    await assert_nothing_created(stack, repo, "extra", SMALL)
    assert task_path(stack, "t1").is_dir(), "a stale worktree is never removed without being asked"

    assert await say_one(stack, "late", "/worktree cleanup stale") == (
        f"Cleaned up 1 stale worktree(s):\n• task-t1 (30 days inactive)\n\nWorktrees: {SMALL - 1}/{SMALL}"
    )
    assert not task_path(stack, "t1").exists() and await status_of(stack, "task-t1") == "destroyed"
    assert await say_one(stack, "late", "/worktree create extra") == created_text(stack, "extra")
    assert sorted(await worktree_dirs(stack)) == ["task-extra", "task-t0", "task-t2"]


@small_limit
async def test_merged_worktrees_in_use_stay_and_dirty_ones_go_into_their_archive_to_make_room(
    stack: Stack, repo: Path
) -> None:
    await stack.register(repo)
    await command(stack, "c0", "/worktree create used")  # merged, but its conversation is still in it
    commit_file(task_path(stack, "used"), "used.txt")
    merge_into_main(repo, "task-used")
    await command(stack, "c1", "/worktree create fresh")  # made after the merge: nothing of its own yet
    await command(stack, "c2", "/worktree create dirty")  # merged and left, with uncommitted changes
    commit_file(task_path(stack, "dirty"), "dirty.txt")
    merge_into_main(repo, "task-dirty")
    await command(stack, "c2", "/worktree link task-used")
    (task_path(stack, "dirty") / "scratch.txt").write_text("not committed\n")

    assert await command(stack, "late", "/worktree create extra") == [
        "Cleaned up 1 merged worktree(s) to make room.", created_text(stack, "extra"),
    ]
    assert sorted(await worktree_dirs(stack)) == ["task-extra", "task-fresh", "task-used"]
    archive = await stack.db.fetchval("SELECT archive_ref FROM isolation_environments WHERE branch_name = 'task-dirty'")
    assert archive_git(repo, "show", f"{archive}:scratch.txt") == "not committed\n"

    full = limit_text(SMALL, merged=1, stale=0, active=2)
    chat = await stack.say("newcomer", "hello")
    assert (chat["result"]["outcome"], chat["result"]["replies"]) == ("limit", [full])
    assert await say_one(stack, "late", "/worktree cleanup merged") == (
        "No merged worktrees to clean up.\n\n"
        "Skipped 1:\n• task-used (still used by 2 conversation(s))\n\n"
        f"Worktrees: {SMALL}/{SMALL}"
    )


@small_limit
@pytest.mark.parametrize("kind", ["chat", "create"])
async def test_a_burst_of_new_conversations_never_passes_the_limit(stack: Stack, repo: Path, kind: str) -> None:
    await stack.register(repo)
    conversations = [f"burst-{n}" for n in range(SMALL + 5)]
    text = {"chat": lambda c: "hello", "create": lambda c: f"/worktree create {c}"}[kind]
    answers = await asyncio.gather(*(stack.say(c, text(c)) for c in conversations))

    rows = await active_rows(stack)
    assert len(rows) == SMALL, [row["branch_name"] for row in rows]
    assert await stack.db.fetchval("SELECT count(*) FROM isolation_environments") == SMALL, "no row came and went"
    paths = sorted(row["working_path"] for row in rows)
    assert sorted(worktree_paths(repo)) == paths
    assert len(await worktree_dirs(stack)) == SMALL, "a worktree made in the race is removed again"
    assert len(branches(repo)) == 1 + SMALL, branches(repo)

    winners = {str(row["id"]) for row in rows}
    refused = 0
    for conversation, answer in zip(conversations, answers):
        replies = answer["result"]["replies"]
        environment = await environment_of(stack, conversation)
        if environment is not None:
            assert str(environment["id"]) in winners
            assert answer["result"]["outcome"] == ("created" if kind == "chat" else "command")
            if kind == "chat":  # no agent is configured: the worktree's line, then the notice saying so
                assert replies == first_replies(environment["branch_name"], repo), replies
            else:
                assert len(replies) == 1 and environment["branch_name"] in replies[0]
        else:
            refused += 1
            assert answer["result"]["outcome"] == ("limit" if kind == "chat" else "command")
            assert replies == [limit_text(SMALL, merged=0, stale=0, active=SMALL)], replies
    assert refused == 5
