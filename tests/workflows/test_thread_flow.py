"""The thread flow through `/test/message`, on real git, PostgreSQL and Temporal."""

from __future__ import annotations

import shutil
from pathlib import Path

from api.dispatch import dispatch_message
from isolator.contracts.message import MessageInput
from tests.chat_commands import active_rows
from tests.conftest import Stack
from tests.gitrepos import branches, first_replies, worktree_paths
from workflows.naming import thread_branch


async def test_first_message_creates_a_worktree_and_the_next_reuses_it(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    branch = thread_branch("test:conv-1")

    first = await stack.say("conv-1", "fix the login bug")
    expected_path = stack.settings.worktree_base.resolve() / "project" / branch
    assert first["result"]["outcome"] == "created"
    assert first["result"]["branch"] == branch
    assert first["result"]["workingPath"] == str(expected_path)
    assert (expected_path / "file0.txt").is_file()
    assert worktree_paths(repo) == [str(expected_path)]
    assert branch in branches(repo)
    # No agent is configured: the first message is told so at once, after the worktree's line.
    assert first["result"]["replies"] == first_replies(branch, repo)
    assert await stack.replies("conv-1") == first_replies(branch, repo)

    rows = await active_rows(stack)
    assert len(rows) == 1
    assert (rows[0]["workflow_type"], rows[0]["workflow_id"], rows[0]["branch_name"]) == ("thread", "test:conv-1", branch)
    conversation = await stack.db.fetchrow("SELECT * FROM conversations WHERE platform_conversation_id = 'conv-1'")
    assert conversation["environment_id"] == rows[0]["id"]
    assert conversation["cwd"] == str(expected_path)

    second = await stack.say("conv-1", "and the logout bug")
    assert second["result"]["outcome"] == "reused"
    assert second["result"]["workingPath"] == str(expected_path)
    assert second["result"]["environmentId"] == first["result"]["environmentId"]
    assert second["result"]["replies"] == [], "reuse is silent: that no agent answers was said once"
    assert await stack.replies("conv-1") == first_replies(branch, repo)
    assert (await stack.say("conv-1", "and the footer"))["result"]["replies"] == [], "and stays silent"
    assert len(await active_rows(stack)) == 1


async def test_each_conversation_gets_its_own_worktree(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    a = await stack.say("slack-a")
    b = await stack.say("slack-b")
    assert a["result"]["workingPath"] != b["result"]["workingPath"]
    assert sorted(worktree_paths(repo)) == sorted([a["result"]["workingPath"], b["result"]["workingPath"]])


async def test_a_worktree_deleted_behind_our_back_is_detected_and_replaced(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    first = await stack.say("conv-stale")
    path = Path(first["result"]["workingPath"])
    (path / "work.txt").write_text("committed work\n")
    from tests.gitrepos import git

    git("add", "work.txt", cwd=path)
    git("commit", "-q", "-m", "work", cwd=path)
    shutil.rmtree(path)

    second = await stack.say("conv-stale")
    assert second["result"]["outcome"] == "created"
    assert second["result"]["workingPath"] == str(path)
    assert second["result"]["environmentId"] != first["result"]["environmentId"]
    assert (path / "work.txt").read_text() == "committed work\n", "the branch and its commits are kept"
    old = await stack.db.fetchrow(
        "SELECT status, destroyed_at FROM isolation_environments WHERE id = $1", first["result"]["environmentId"]
    )
    assert old["status"] == "destroyed" and old["destroyed_at"] is not None
    replies = await stack.replies("conv-stale")
    assert len(replies) == 4
    assert replies[:2] == first_replies(thread_branch("test:conv-stale"), repo)
    assert "no longer exists" in replies[2] and str(path) in replies[2]
    assert replies[3] == f"Working in isolated branch `{thread_branch('test:conv-stale')}`", "no notice again"
    assert len(await active_rows(stack)) == 1


async def test_without_a_codebase_the_reply_says_how_to_register_one(stack: Stack) -> None:
    answer = await stack.say("lonely")
    assert answer["result"]["outcome"] == "no_codebase"
    (reply,) = await stack.replies("lonely")
    assert "/clone" in reply
    assert await active_rows(stack) == []


async def test_with_two_codebases_the_conversation_must_choose(stack: Stack, repo: Path, tmp_path: Path) -> None:
    from tests.gitrepos import make_repo

    await stack.register(repo)
    await stack.register(make_repo(tmp_path / "repos" / "other"))
    answer = await stack.say("undecided")
    assert answer["result"]["outcome"] == "no_codebase"
    (reply,) = await stack.replies("undecided")
    assert "`other`" in reply and "`project`" in reply and "/clone" in reply

    await stack.say("undecided", f"/clone {repo}")
    chosen = await stack.say("undecided", "now work")
    assert chosen["result"]["outcome"] == "created"
    assert "/project/" in chosen["result"]["workingPath"]


async def test_clone_in_chat_registers_a_path_and_links_an_existing_one(stack: Stack, repo: Path) -> None:
    await stack.say("chat-1", f"/clone {repo}")
    (reply,) = await stack.replies("chat-1")
    assert "Registered repository `project`" in reply
    rows = await stack.db.fetch("SELECT name, canonical_path FROM codebases")
    assert [(row["name"], row["canonical_path"]) for row in rows] == [("project", str(repo))]

    await stack.say("chat-2", f"/clone {repo}")
    assert "already registered" in (await stack.replies("chat-2"))[0]
    assert await stack.db.fetchval("SELECT count(*) FROM codebases") == 1


async def test_clone_in_chat_by_url_clones_into_the_workspace(stack: Stack, repo: Path) -> None:
    await stack.say("chat-url", f"/clone file://{repo}")
    (reply,) = await stack.replies("chat-url")
    assert "Registered repository `project`" in reply
    clone = stack.settings.workspace_path / "project"
    assert (clone / "file0.txt").is_file()
    answer = await stack.say("chat-url", "work")
    assert answer["result"]["outcome"] == "created"
    assert worktree_paths(clone) == [answer["result"]["workingPath"]]


async def test_clone_errors_are_explained_and_change_nothing(stack: Stack, tmp_path: Path) -> None:
    not_a_repo = tmp_path / "plain"
    not_a_repo.mkdir()
    await stack.say("bad-clone", f"/clone {not_a_repo}")
    await stack.say("bad-clone", "/clone")
    await stack.say("bad-clone", "/clone not a url")
    await stack.say("bad-clone", f"/clone file://{tmp_path}/missing")
    replies = await stack.replies("bad-clone")
    assert "is not a git repository" in replies[0] and "Usage" in replies[0]
    assert all("Usage: `/clone" in reply for reply in replies)
    assert "Could not clone" in replies[3]
    assert await stack.db.fetchval("SELECT count(*) FROM codebases") == 0
    workspace = stack.settings.workspace_path
    assert not workspace.exists() or list(workspace.iterdir()) == []


async def test_help_status_and_unknown_commands(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    await stack.say("cmds", "/help")
    await stack.say("cmds", "/status")
    created = await stack.say("cmds", "work please")
    await stack.say("cmds", "@isolator /status")
    await stack.say("cmds", "/frobnicate")
    replies = await stack.replies("cmds")
    assert replies[0].startswith("Commands:") and "/clone" in replies[0]
    assert "Codebase: project" in replies[1] and "Worktree: none (your next message makes one)" in replies[1]
    assert replies[2:4] == created["result"]["replies"] == first_replies(thread_branch("test:cmds"), repo)
    assert created["result"]["workingPath"] in replies[4]
    assert replies[5].startswith("Unknown command `/frobnicate`.") and len(replies) == 6


async def test_the_same_conversation_id_on_two_platforms_gets_two_worktrees_on_two_branches(
    stack: Stack, repo: Path
) -> None:
    """A test-adapter conversation named like a Slack thread is another piece of work."""
    await stack.register(repo)
    conversation = "C123:1700000000.000100"
    from_test = (await stack.say(conversation, "work"))["result"]
    # The Slack thread's first message, handed over as the Slack webhook does (its reply has no
    # Slack to go to here: that is logged, and the work is done).
    slack = MessageInput(platform="slack", conversation_id=conversation, text="work", message_key="slack-1",
                         default_host=stack.settings.host)
    from_slack = await (await dispatch_message(stack.temporal, stack.settings.task_queue, slack)).result()

    assert from_test["outcome"] == from_slack.outcome == "created"
    assert from_test["branch"] == thread_branch(f"test:{conversation}")
    assert from_slack.branch == thread_branch(f"slack:{conversation}")
    assert from_test["workingPath"] != from_slack.working_path


async def test_a_thread_environment_from_before_the_platform_was_in_its_identity_keeps_working(
    stack: Stack, repo: Path
) -> None:
    await stack.register(repo)
    first = (await stack.say("before-migration", "work"))["result"]
    # As recorded before migration 005: the identity was the conversation id alone.
    await stack.db.execute("UPDATE isolation_environments SET workflow_id = 'before-migration' WHERE id = $1::uuid",
                           first["environmentId"])
    migration = Path(__file__).resolve().parents[2] / "migrations" / "005_thread_identity_names_its_platform.sql"
    await stack.db.execute(migration.read_text())

    row = await stack.db.fetchrow("SELECT workflow_id, branch_name FROM isolation_environments WHERE id = $1::uuid",
                                  first["environmentId"])
    again = (await stack.say("before-migration", "more work"))["result"]

    assert (row["workflow_id"], row["branch_name"]) == ("test:before-migration", first["branch"])
    assert (again["outcome"], again["branch"], again["environmentId"]) == ("reused", first["branch"],
                                                                            first["environmentId"])
