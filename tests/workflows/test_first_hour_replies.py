"""What a newcomer reads in the first hour (issue 31): replies that say what they mean, once, in one
voice. Real git, PostgreSQL and Temporal through `/test/message`."""

from __future__ import annotations

from pathlib import Path

from tests.chat_commands import say_one
from tests.conftest import Stack
from tests.gitrepos import make_repo
from workflows.chat import agent_texts, worktree_texts


async def test_an_unknown_command_is_named(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    reply = await say_one(stack, "words-1", "/frobnicate now")
    assert reply.startswith("Unknown command `/frobnicate`."), reply
    assert "`/help`" in reply, "the help follows"


async def test_an_unknown_worktree_subcommand_is_named_before_the_usage(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    reply = await say_one(stack, "words-6", "/worktree Frob now")
    assert reply == "Unknown subcommand `/worktree Frob`.\n\n" + worktree_texts.USAGE


async def test_a_name_with_accents_is_refused_with_ascii_named(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    reply = await say_one(stack, "words-2", "/worktree create héllo-wörld")
    assert "ASCII letters (a-z, A-Z)" in reply, reply


def test_one_run_ahead_is_said_in_the_singular() -> None:
    assert agent_texts.queued(1).endswith("and 1 run comes first.")
    assert agent_texts.queued(2).endswith("and 2 runs come first.")


async def test_why_of_a_fresh_worktree_says_it_has_no_work_yet_in_one_voice(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    branch = (await stack.say("demo-1", "hello"))["result"]["branch"]
    text = await say_one(stack, "demo-1", f"/worktree why {branch}")
    assert "not merged" not in text and "Merged: yes" not in text, text
    assert "Cleanup: not a cleanup candidate: no work of its own yet (so nothing to merge), and not stale" in text
    assert "Merged: not yet a question: the branch has no commits of its own since it started" in text
    assert "Conversations: `test:demo-1` (active today)" in text


async def test_a_removal_is_said_once(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    created = (await stack.say("words-3", "hello"))["result"]
    (Path(created["workingPath"]) / "notes.txt").write_text("work\n")
    reply = await say_one(stack, "words-3", "/worktree remove --force")
    assert reply.startswith(f"Removed worktree `{created['workingPath']}` (branch `{created['branch']}`).")
    assert reply.count("Removed worktree") == 1, reply


async def test_removed_after_a_restore_does_not_claim_nothing_was_removed(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    await say_one(stack, "words-4", "/worktree create gone")
    await say_one(stack, "words-4", "/worktree remove")
    assert "task-gone" in await say_one(stack, "words-4", "/worktree removed")
    assert (await say_one(stack, "words-4", "/worktree restore task-gone")).startswith("Restored `task-gone`")

    listing = await say_one(stack, "words-4", "/worktree removed")
    assert "no worktree was removed" not in listing, listing
    assert listing == ("Nothing of `project` waits to be restored: the 1 worktree(s) removed in the last 30 days "
                       "are back already (`/worktree list` shows them).")


async def test_a_message_before_a_codebase_is_chosen_is_asked_again(stack: Stack, repo: Path, tmp_path: Path) -> None:
    nothing = (await stack.say("words-5", "fix the login"))["result"]
    assert nothing["outcome"] == "no_codebase"
    assert "your message was not handed on" in nothing["replies"][0]
    assert nothing["replies"][0].endswith("`/clone <repository-url-or-path>`, then send your message again.")

    await stack.register(repo)
    await stack.register(make_repo(tmp_path / "repos" / "other"))
    undecided = (await stack.say("words-5", "fix the login"))["result"]
    assert undecided["outcome"] == "no_codebase"
    assert "`other`, `project`" in undecided["replies"][0] and "not handed on" in undecided["replies"][0]
    assert undecided["replies"][0].endswith("for example `/clone other`, then send your message again.")


async def test_pr_in_a_checkout_without_origin_says_there_is_no_origin(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    created = (await stack.say("pr-no-origin", "hello"))["result"]
    (Path(created["workingPath"]) / "new.txt").write_text("work\n")

    said = (await stack.say("pr-no-origin", "/pr add a file"))["result"]["replies"]

    assert said == [f"The work stays on the server, on branch `{created['branch']}` ({created['workingPath']}): "
                    f"nothing was pushed, as the checkout has no `origin`. `/worktree why {created['branch']}` "
                    "shows it."], said
