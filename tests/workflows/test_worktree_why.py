"""`/worktree why <name>`: everything known about a worktree (its state, why it counts as merged or
stale, its uncommitted files and unpushed commits, its disk use, its conversations, its archive
refs) and what the cleanup would do with it. Real git, PostgreSQL and Temporal."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Stack
from tests.gitrepos import git
from tests.schedules import commit_in


async def why(stack: Stack, conversation: str, name: str) -> str:
    return (await stack.say(conversation, f"/worktree why {name}"))["result"]["replies"][0]


async def test_why_shows_the_work_a_worktree_holds_and_what_the_cleanup_would_do(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    created = (await stack.say("why-1", "work"))["result"]
    worktree, branch = Path(created["workingPath"]), created["branch"]
    commit_in(worktree, "feature.txt", "the feature\n")
    (worktree / "notes.txt").write_text("not committed\n")
    (worktree / "big.bin").write_bytes(b"x" * (3 << 20))

    text = await why(stack, "why-2", branch)
    assert text.startswith(f"`{branch}` at `{worktree}`")
    assert "Merged: no, it has work of its own" in text
    assert "Uncommitted: 2\n" in text and "`?? notes.txt`" in text and "`?? big.bin`" in text
    assert "Unpushed commits: 1\n" in text and "feature" in text
    assert "Cleanup: not a cleanup candidate" in text
    disk = float(text.split("Disk: ")[1].split(" MiB")[0])
    assert 3.0 <= disk < 4.0, text  # real blocks of the 3 MiB file and the rest
    assert "Conversations: `test:why-1` (active today)" in text and "Archive refs: none" in text
    assert "Last activity: today (stale after" in text, "not '0 days ago'"

    # Its change reaches main by a cherry-pick (a rebase merge): merged, by patch id; kept while in use.
    (worktree / "notes.txt").unlink()
    (worktree / "big.bin").unlink()
    tip = git("rev-parse", branch, cwd=repo).strip()
    commit_in(repo, "other.txt", "main moved on\n")  # so that the picked commit is another commit
    git("cherry-pick", tip, cwd=repo)
    text = await why(stack, "why-2", branch)
    assert "Merged: yes, every one of its 1 commit(s) is in `main` by patch id (a rebase merge)" in text
    assert "Cleanup: the cleanup keeps it although it qualifies: still used by 1 conversation(s)" in text

    # Merged by a merge commit: its tip is an ancestor; quiet for 30 days, the next cleanup removes it.
    git("merge", "-q", "--no-ff", "-m", "merge", branch, cwd=repo)
    await stack.db.execute("UPDATE conversations SET last_activity_at = now() - interval '30 days' "
                           "WHERE platform_conversation_id = 'why-1'")
    text = await why(stack, "why-2", branch)
    assert "Merged: yes, its tip is an ancestor of `main`" in text
    assert "Cleanup: the next cleanup removes it (merged)" in text
    assert "Last activity: 30 days ago" in text


async def test_why_refuses_what_it_cannot_name(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    await stack.say("why-3", "work")
    assert (await why(stack, "why-3", "issue-404")).startswith("No active worktree `issue-404`")
    usage = (await stack.say("why-3", "/worktree why issue-1 issue-2"))["result"]["replies"][0]
    assert usage.startswith("Usage: `/worktree why [name]`")


async def test_why_finds_a_squash_merge_and_not_one_commit_more(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    created = (await stack.say("why-4", "work"))["result"]
    worktree, branch = Path(created["workingPath"]), created["branch"]
    for number in range(3):
        commit_in(worktree, f"part{number}.txt", f"part {number}\n")
    git("merge", "-q", "--squash", branch, cwd=repo)
    git("commit", "-q", "-m", "squashed", cwd=repo)
    text = await why(stack, "why-5", branch)
    assert "Merged: yes, its whole change is in `main`: merging it again changes nothing (a squash merge)" in text

    commit_in(worktree, "after.txt", "one more\n")
    text = await why(stack, "why-5", branch)
    assert "Merged: no, it has work of its own" in text
