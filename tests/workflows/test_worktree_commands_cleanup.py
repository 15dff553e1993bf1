"""`/worktree cleanup merged|stale` and `/worktree orphans` end to end: what goes, what stays and why,
on real git, PostgreSQL and Temporal."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.archives import archive_git
from tests.chat_commands import active_rows, command, environment_of, say_one, task_path
from tests.conftest import Stack
from tests.gitrepos import branches, git, worktree_paths
from tests.lifecycle import (
    backdate,
    commit_file,
    counts_in_status,
    merge_into_main,
    status_of,
)
from workflows.chat import worktree_texts


async def test_cleanup_merged_removes_merged_worktrees_nobody_uses_and_says_why_others_stay(
    stack: Stack, repo: Path
) -> None:
    await stack.register(repo)
    await command(stack, "m", "/worktree create done")
    commit_file(task_path(stack, "done"), "done.txt")
    merge_into_main(repo, "task-done")
    await command(stack, "m", "/worktree create next")  # moves on: `done` is nobody's now; `next` is fresh
    await command(stack, "u", "/worktree create used")
    commit_file(task_path(stack, "used"), "used.txt")
    merge_into_main(repo, "task-used")
    await command(stack, "d", "/worktree create dirty")
    commit_file(task_path(stack, "dirty"), "dirty.txt")
    merge_into_main(repo, "task-dirty")
    await command(stack, "d", "/worktree create elsewhere")
    (task_path(stack, "dirty") / "scratch.txt").write_text("not committed\n")

    assert await counts_in_status(stack, "admin") == [
        "Worktrees: 5/25", "  • 3 merged (can auto-remove)", "  • 0 stale (14+ days inactive)", "  • 2 active",
    ]
    reply = await say_one(stack, "admin", "/worktree cleanup merged")
    assert reply == (  # uncommitted changes go into the worktree's archive: no reason to stay
        "Cleaned up 2 merged worktree(s):\n• task-done (merged)\n• task-dirty (merged)\n\n"
        "Skipped 1:\n• task-used (still used by 1 conversation(s))\n\n"
        "Worktrees: 3/25"
    )
    assert not task_path(stack, "done").exists() and "task-done" in branches(repo), "kept with its archive"
    assert await status_of(stack, "task-done") == "destroyed"
    # The proof that it was merged is kept with it, and served with the environment.
    done = await stack.db.fetchrow("SELECT id, removal_reason FROM isolation_environments WHERE branch_name = 'task-done'")
    assert done["removal_reason"] == "merged: its tip is an ancestor of `main`"
    served = await stack.api.get(f"/api/environments/{done['id']}")
    assert served.json()["removal_reason"] == "merged: its tip is an ancestor of `main`"
    assert sorted(worktree_paths(repo)) == sorted(
        str(task_path(stack, name)) for name in ("next", "used", "elsewhere")
    )
    dirty = await stack.db.fetchval("SELECT archive_ref FROM isolation_environments WHERE branch_name = 'task-dirty'")
    assert archive_git(repo, "show", f"{dirty}:scratch.txt") == "not committed\n"
    assert [row["branch_name"] for row in await active_rows(stack)] == ["task-next", "task-used", "task-elsewhere"]
    assert (await environment_of(stack, "u"))["branch_name"] == "task-used"

    again = await say_one(stack, "admin", "/worktree cleanup merged")
    assert again.startswith("No merged worktrees to clean up.\n\nSkipped 1:")
    assert again.endswith("Worktrees: 3/25")
    assert len(worktree_paths(repo)) == 3


async def test_cleanup_stale_removes_long_silent_worktrees_into_their_archives_but_keeps_unpushed_work(
    stack: Stack, repo: Path
) -> None:
    await stack.register(repo)
    for conversation, name in [("s1", "old"), ("s2", "oldwork"), ("s3", "olddirty"), ("s4", "recent"),
                               ("s5", "quiet")]:
        await command(stack, conversation, f"/worktree create {name}")
    unpushed = commit_file(task_path(stack, "oldwork"), "work.txt")
    (task_path(stack, "olddirty") / "scratch.txt").write_text("not committed\n")
    for conversation in ("s1", "s2", "s3"):
        await backdate(stack, conversation, 30)
    await backdate(stack, "s5", 10)  # under STALE_THRESHOLD_DAYS (14)

    assert await counts_in_status(stack, "admin") == [
        "Worktrees: 5/25", "  • 0 merged (can auto-remove)", "  • 3 stale (14+ days inactive)", "  • 2 active",
    ]
    reply = await say_one(stack, "admin", "/worktree cleanup stale")
    assert reply == (
        "Cleaned up 2 stale worktree(s):\n• task-old (30 days inactive)\n• task-olddirty (30 days inactive)\n\n"
        "Skipped 1:\n• task-oldwork (has unpushed commits)\n\n"
        "Worktrees: 3/25"
    )
    assert not task_path(stack, "old").exists() and await status_of(stack, "task-old") == "destroyed"
    assert await environment_of(stack, "s1") is None, "the silent conversation no longer points at it"
    assert git("rev-parse", "task-oldwork", cwd=repo).strip() == unpushed
    dirty = await stack.db.fetchval("SELECT archive_ref FROM isolation_environments WHERE branch_name = 'task-olddirty'")
    assert archive_git(repo, "show", f"{dirty}:scratch.txt") == "not committed\n"
    assert sorted(worktree_paths(repo)) == sorted(
        str(task_path(stack, name)) for name in ("oldwork", "recent", "quiet")
    )
    assert await say_one(stack, "admin", "/worktree cleanup merged") == (
        "No merged worktrees to clean up.\n\nWorktrees: 3/25"
    )


async def test_orphans_reports_untracked_worktrees_and_vanished_paths_and_removes_nothing(
    stack: Stack, repo: Path
) -> None:
    await stack.register(repo)
    assert await say_one(stack, "o", "/worktree orphans") == (
        "No orphans: every worktree is tracked and every tracked path exists."
    )
    await command(stack, "o", "/worktree create tracked")
    await command(stack, "o", "/worktree create vanished")
    manual = stack.settings.worktree_base.resolve() / "project" / "by-hand"
    git("worktree", "add", "-q", "-b", "by-hand", str(manual), cwd=repo)
    outside = stack.tmp_path / "elsewhere"
    git("worktree", "add", "-q", "-b", "elsewhere", str(outside), cwd=repo)  # not under WORKTREE_BASE: not ours
    vanished = task_path(stack, "vanished")
    shutil.rmtree(vanished)

    reply = await say_one(stack, "o", "/worktree orphans")
    assert reply == (
        f"Worktrees git knows that no conversation tracks:\n• `{manual}`\n\n"
        f"Tracked worktrees whose path is gone:\n• `{vanished}`"
    )
    assert manual.is_dir() and outside.is_dir() and task_path(stack, "tracked").is_dir()
    assert [row["branch_name"] for row in await active_rows(stack)] == ["task-tracked", "task-vanished"]
    assert len(worktree_paths(repo)) == 4, "git's record of the vanished one is not pruned by a report"


async def test_a_dry_run_says_what_would_go_and_why_and_removes_nothing(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    await command(stack, "dry", "/worktree create done")
    commit_file(task_path(stack, "done"), "done.txt")
    merge_into_main(repo, "task-done")
    await command(stack, "dry", "/worktree create dirty")
    commit_file(task_path(stack, "dirty"), "dirty.txt")
    merge_into_main(repo, "task-dirty")
    await command(stack, "dry", "/worktree create elsewhere")
    (task_path(stack, "dirty") / "scratch.txt").write_text("not committed\n")
    await command(stack, "used", "/worktree create used")
    commit_file(task_path(stack, "used"), "used.txt")
    merge_into_main(repo, "task-used")

    preview = await say_one(stack, "admin", "/worktree cleanup merged --dry-run")

    assert preview == (
        "Would clean up 2 merged worktree(s):\n• task-done (merged: its tip is an ancestor of `main`)\n"
        "• task-dirty (merged: its tip is an ancestor of `main`)\n\n"
        "Would keep 1:\n• task-used (still used by 1 conversation(s))\n\n"
        "Nothing was removed (`--dry-run`)."
    )
    assert sorted(worktree_paths(repo)) == sorted(
        str(task_path(stack, name)) for name in ("done", "dirty", "elsewhere", "used"))
    assert (task_path(stack, "dirty") / "scratch.txt").read_text() == "not committed\n"
    assert await status_of(stack, "task-done") == "active"
    assert await say_one(stack, "admin", "/worktree cleanup --dry-run") == worktree_texts.USAGE
