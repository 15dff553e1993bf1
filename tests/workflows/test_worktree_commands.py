"""Chat commands end to end through `/test/message`: `/help`, `/status`, `/worktree create|list|remove`
and unknown commands, on real git, PostgreSQL and Temporal. Every check looks at the disk, the rows
and the words the user gets."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest

from activities.sandbox import bubblewrap, limits
from tests.archives import archive_git, archive_refs
from tests.chat_commands import (
    active_rows,
    command,
    cwd_of,
    environment_of,
    say_one,
    task_path,
)
from tests.conftest import Stack
from tests.gitrepos import branches, git, started_from, worktree_paths
from workflows.chat import agent_texts, texts, worktree_texts
from workflows.chat.setup_texts import NOTHING_TO_SET_UP

# --- /help, /status, unknown commands -------------------------------------------------------------


async def test_help_lists_the_commands(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    reply = await say_one(stack, "help-1", "/help")
    assert reply == texts.HELP
    for name in ("/clone", "/status", "/worktree", "/help"):
        assert name in reply
    assert await active_rows(stack) == [] and worktree_paths(repo) == [], "a command creates no worktree"


async def test_status_without_a_repository_says_how_to_register_one(stack: Stack) -> None:
    reply = await say_one(stack, "status-0", "/status")
    assert reply.splitlines() == [
        "Codebase: none (use `/clone`)", "Worktree: none",
    ]
    assert "Worktrees:" not in reply


async def ready_ports(stack: Stack, environment_id: str) -> tuple[int, int]:
    """The environment's ports, once its set-up (none here) is done."""
    for _ in range(200):
        row = await stack.db.fetchrow(
            """SELECT e.setup_state, min(p.port) AS first, max(p.port) AS last FROM isolation_environments e
               LEFT JOIN port_allocations p ON p.environment_id = e.id WHERE e.id = $1 GROUP BY e.id""",
            uuid.UUID(environment_id),
        )
        if row["setup_state"] == "ready":
            return row["first"], row["last"]
        await asyncio.sleep(0.05)
    raise AssertionError(f"set-up of {environment_id} did not finish: {row['setup_state']}")


async def test_status_shows_the_codebase_the_worktree_and_the_counts(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    before = await say_one(stack, "status-1", "/status")
    assert before.splitlines()[-4:] == ["Disk: 0 KiB in all", "Sandbox: on, network: egress (the allowed hosts only)",
                                        bubblewrap.current().seen, limits.current().status]
    assert before.splitlines()[-2].startswith("A run sees: its worktree") and "nothing else of the host" in before
    assert before.splitlines()[:-4] == [
        "Codebase: project",
        "Worktree: none (your next message makes one)",
        f"Host: {stack.settings.host}, alive",
        "Worktrees: 0/25",
        "  • 0 merged (can auto-remove)",
        "  • 0 stale (14+ days inactive)",
        "  • 0 active",
    ]

    created = await stack.say("status-1", "fix the login bug")
    path, branch = created["result"]["workingPath"], created["result"]["branch"]
    await command(stack, "status-2", "/worktree create other")
    first, last = await ready_ports(stack, created["result"]["environmentId"])
    after = await say_one(stack, "status-1", "/status")
    disk, sandbox, seen, limited = after.splitlines()[-4:]
    assert disk.startswith("Disk: ") and disk.endswith(" KiB in all") and sandbox.startswith("Sandbox: on")
    assert seen == bubblewrap.current().seen and limited == limits.current().status
    assert after.splitlines()[:-4] == [
        "Codebase: project",
        f"Worktree: `{path}` (branch `{branch}`)",
        f"Set-up: {NOTHING_TO_SET_UP}",  # the repository has no `.isolator.toml`
        f"Ports: {first}-{last} (ISOLATOR_PORT={first})",
        "Agent session: none yet (the next message starts one).",
        f"Host: {stack.settings.host}, alive",
        "Worktrees: 2/25",
        "  • 0 merged (can auto-remove)",
        "  • 0 stale (14+ days inactive)",
        "  • 2 active",
    ]


@pytest.mark.parametrize(("text", "name"), [("/frobnicate", "frobnicate"), ("/worktre create x", "worktre"),
                                            ("@isolator /nope", "nope")])
async def test_an_unknown_command_gets_the_help(stack: Stack, repo: Path, text: str, name: str) -> None:
    await stack.register(repo)
    assert await say_one(stack, "unknown-1", text) == texts.unknown_command(name)
    assert await active_rows(stack) == [] and worktree_paths(repo) == []


@pytest.mark.parametrize("text", ["/worktree", "/worktree cleanup", "/worktree cleanup all",
                                  "/worktree remove a b", "/worktree remove -x"])
async def test_an_unknown_or_malformed_subcommand_gets_the_usage(stack: Stack, repo: Path, text: str) -> None:
    await stack.register(repo)
    reply = await say_one(stack, "usage-1", text)
    assert reply == worktree_texts.USAGE
    for subcommand in ("create", "list", "remove", "link", "cleanup", "orphans"):
        assert f"/worktree {subcommand}" in reply
    assert await active_rows(stack) == [] and worktree_paths(repo) == []


async def test_worktree_commands_without_a_repository_say_how_to_register_one(stack: Stack) -> None:
    assert await say_one(stack, "nocode-1", "/worktree create x") == texts.no_codebase([])
    assert await stack.db.fetchval("SELECT count(*) FROM isolation_environments") == 0


# --- /worktree create -----------------------------------------------------------------------------


async def test_create_makes_a_task_worktree_and_moves_the_conversation_into_it(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    reply = await say_one(stack, "create-1", "/worktree create Fix-Login")
    path = task_path(stack, "fix-login")
    assert reply == (f"Created worktree `{path}` on branch `task-fix-login`{started_from(repo)}. "
                     "This conversation now works in it.")
    assert (path / "file0.txt").is_file()
    assert worktree_paths(repo) == [str(path)]
    assert "task-fix-login" in branches(repo)
    assert git("rev-parse", "--abbrev-ref", "HEAD", cwd=path).strip() == "task-fix-login"

    (row,) = await active_rows(stack)
    assert (row["workflow_type"], row["workflow_id"], row["branch_name"], row["working_path"]) == (
        "task", "fix-login", "task-fix-login", str(path)
    )
    main_tip = git("rev-parse", "main", cwd=repo).strip()
    assert row["metadata"]["start_commit"] == main_tip, "a fresh branch records where it started"
    assert (await environment_of(stack, "create-1"))["id"] == row["id"]
    assert await cwd_of(stack, "create-1") == str(path)

    # The next ordinary message works there; no agent is configured, which it says (once).
    again = await stack.say("create-1", "now fix it")
    assert (again["result"]["outcome"], again["result"]["workingPath"]) == ("reused", str(path))
    assert again["result"]["replies"] == [agent_texts.no_agent()]


async def test_create_from_a_conversation_with_a_worktree_moves_it_and_keeps_the_old_one(
    stack: Stack, repo: Path
) -> None:
    await stack.register(repo)
    thread = await stack.say("create-2", "hello")
    await command(stack, "create-2", "/worktree create side")
    assert (await environment_of(stack, "create-2"))["branch_name"] == "task-side"
    assert sorted(worktree_paths(repo)) == sorted([thread["result"]["workingPath"], str(task_path(stack, "side"))])
    assert len(await active_rows(stack)) == 2


@pytest.mark.parametrize("name", ["../x", "-x", "x@{y", "a" * 51, "a..b", "x.lock", "x.", ".x", "a/b", "x~1"])
async def test_create_refuses_a_bad_name_and_says_what_is_allowed(stack: Stack, repo: Path, name: str) -> None:
    await stack.register(repo)
    reply = await say_one(stack, "badname-1", f"/worktree create {name}")
    assert reply == worktree_texts.invalid_task_name(name)
    assert "up to 50 ASCII letters (a-z, A-Z), digits, `.`, `_` or `-`" in reply
    assert await stack.db.fetchval("SELECT count(*) FROM isolation_environments") == 0
    assert worktree_paths(repo) == [] and branches(repo) == ["main"]
    assert not (stack.settings.worktree_base / "project").exists()


async def test_create_refuses_a_name_with_spaces_and_no_name(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    reply = await say_one(stack, "badname-2", "/worktree create a b")
    assert reply == worktree_texts.invalid_task_name("a b")
    assert "up to 50 ASCII letters" in reply
    assert await say_one(stack, "badname-2", "/worktree create") == worktree_texts.CREATE_USAGE
    assert await stack.db.fetchval("SELECT count(*) FROM isolation_environments") == 0
    assert worktree_paths(repo) == [] and branches(repo) == ["main"]


async def test_a_fifty_character_name_is_allowed(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    name = "a" * 50
    await command(stack, "longname-1", f"/worktree create {name}")
    assert worktree_paths(repo) == [str(task_path(stack, name))]


async def test_create_of_an_existing_name_joins_it_and_creates_nothing(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    await command(stack, "exists-a", "/worktree create shared")
    path = task_path(stack, "shared")
    (path / "draft.txt").write_text("work in progress\n")

    reply = await say_one(stack, "exists-b", "/worktree create SHARED")
    assert reply == f"Worktree `task-shared` already exists at `{path}`. This conversation now works in it."
    assert worktree_paths(repo) == [str(path)]
    assert (path / "draft.txt").read_text() == "work in progress\n", "the existing worktree is left as it is"
    (row,) = await active_rows(stack)
    assert (await environment_of(stack, "exists-a"))["id"] == row["id"]
    assert (await environment_of(stack, "exists-b"))["id"] == row["id"]

    # The conversation already in it is told so, not left without an answer.
    again = await say_one(stack, "exists-a", "/worktree create shared")
    assert again == f"This conversation already works in branch `task-shared` at `{path}`."
    assert len(await active_rows(stack)) == 1 and worktree_paths(repo) == [str(path)]


# --- /worktree list -------------------------------------------------------------------------------


async def test_list_shows_every_worktree_and_marks_the_conversations_own(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    assert await say_one(stack, "list-a", "/worktree list") == "No worktrees for **project** yet.\nWorktrees: 0/25"

    thread = await stack.say("list-b", "hello")
    await command(stack, "list-a", "/worktree create alpha")
    reply = await say_one(stack, "list-a", "/worktree list")
    thread_path, thread_branch = thread["result"]["workingPath"], thread["result"]["branch"]
    lines = reply.splitlines()
    assert lines[0] == "Worktrees of **project** (2/25):"
    assert lines[1].startswith(f"• `{thread_branch}` at `{thread_path}` (") and lines[1].endswith(" KiB)")
    assert lines[2].startswith(f"• `task-alpha` at `{task_path(stack, 'alpha')}` (") and lines[2].endswith(" KiB) ← this conversation's")
    assert lines[3].startswith("Disk: ") and lines[3].endswith(" KiB in all") and len(lines) == 4
    other = await say_one(stack, "list-b", "/worktree list")
    assert other.splitlines()[1].endswith("← this conversation's")
    assert not other.splitlines()[2].endswith("← this conversation's")
    sizes = [int(line.rsplit("(", 1)[1].split(" KiB")[0]) for line in lines[1:3]]
    assert all(4 <= size < 100 for size in sizes), "three small files and git's pointer: a few blocks each"


# --- /worktree remove -----------------------------------------------------------------------------


async def test_remove_without_a_name_removes_the_conversations_own_worktree(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    await command(stack, "remove-1", "/worktree create gone")
    path = task_path(stack, "gone")
    (row,) = await active_rows(stack)

    reply = await say_one(stack, "remove-1", "/worktree remove")
    assert reply.startswith(f"Removed worktree `{path}` (branch `task-gone`).")
    assert reply.count("Removed worktree") == 1, reply
    assert f"archived as `refs/isolator/archive/{row['id']}`, and its branch `task-gone` kept" in reply
    assert "`/worktree restore task-gone` brings it back for 30 days" in reply
    assert not path.exists() and worktree_paths(repo) == [] and "task-gone" in branches(repo)
    status = await stack.db.fetchrow("SELECT status, destroyed_at, removal_reason, archive_ref FROM "
                                     "isolation_environments WHERE id = $1", row["id"])
    assert status["status"] == "destroyed" and status["destroyed_at"] is not None
    assert status["removal_reason"] == "removed by command"
    assert status["archive_ref"] == f"refs/isolator/archive/{row['id']}"
    assert await environment_of(stack, "remove-1") is None and await cwd_of(stack, "remove-1") is None

    assert await say_one(stack, "remove-1", "/worktree remove") == worktree_texts.no_worktree_here("remove")
    assert "Worktree: none (your next message makes one)" in (await say_one(stack, "remove-1", "/status")).splitlines()


async def test_remove_by_name_and_of_an_unknown_name(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    await command(stack, "remove-2", "/worktree create first")
    await command(stack, "remove-2", "/worktree create second")  # moves on: `first` is nobody's now
    first, second = task_path(stack, "first"), task_path(stack, "second")

    reply = await say_one(stack, "remove-2", "/worktree remove task-first")
    assert reply.startswith(f"Removed worktree `{first}` (branch `task-first`).")
    assert not first.exists() and worktree_paths(repo) == [str(second)]
    assert [row["branch_name"] for row in await active_rows(stack)] == ["task-second"]
    assert (await environment_of(stack, "remove-2"))["branch_name"] == "task-second", "its own worktree stays"

    for name in ("task-first", "nope"):
        assert await say_one(stack, "remove-2", f"/worktree remove {name}") == (
            f"No active worktree `{name}` in **project**. See `/worktree list`."
        )
    assert worktree_paths(repo) == [str(second)]


async def test_remove_refuses_a_worktree_another_conversation_uses(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    await command(stack, "owner", "/worktree create busy")
    reply = await say_one(stack, "bystander", "/worktree remove task-busy")
    assert reply == worktree_texts.still_used("task-busy", 1)
    assert worktree_paths(repo) == [str(task_path(stack, "busy"))]
    assert len(await active_rows(stack)) == 1


async def test_remove_refuses_uncommitted_changes_and_force_archives_them(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    await command(stack, "dirty-1", "/worktree create dirty")
    path = task_path(stack, "dirty")
    (path / "notes.txt").write_text("half-done work\n")
    (path / "file0.txt").write_text("edited\n")

    refused = await say_one(stack, "dirty-1", "/worktree remove")
    assert "has uncommitted changes, so it was not removed" in refused
    assert "/worktree remove --force" in refused and "/worktree restore" in refused
    assert (path / "notes.txt").read_text() == "half-done work\n"
    (row,) = await active_rows(stack)
    assert worktree_paths(repo) == [str(path)]
    assert archive_refs(repo) == []

    reply = await say_one(stack, "dirty-1", "/worktree remove --force")
    assert reply.startswith(f"Removed worktree `{path}` (branch `task-dirty`).")
    assert not path.exists() and worktree_paths(repo) == [] and await active_rows(stack) == []
    (snapshot,) = archive_refs(repo)
    assert snapshot == f"refs/isolator/archive/{row['id']}"
    assert f"`{snapshot}`" in reply
    assert archive_git(repo, "show", f"{snapshot}:file0.txt") == "edited\n"
    saved = archive_git(repo, "show", "--name-only", "--format=", snapshot).split()
    assert "notes.txt" in saved, saved
    assert archive_git(repo, "show", f"{snapshot}:notes.txt") == "half-done work\n"


async def test_create_over_a_foreign_folder_says_why_and_touches_nothing(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    path = task_path(stack, "taken")
    path.mkdir(parents=True)
    (path / "mine.txt").write_text("not a worktree\n")

    reply = await say_one(stack, "foreign-1", "/worktree create taken")
    assert reply.startswith(f"`/worktree create` failed: `{path}` already exists and is not a worktree")
    assert "Move it away or remove it" in reply
    assert (path / "mine.txt").read_text() == "not a worktree\n"
    assert worktree_paths(repo) == [] and branches(repo) == ["main"]
    assert await stack.db.fetchval("SELECT count(*) FROM isolation_environments") == 0
