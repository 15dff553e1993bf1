"""Others' commits on a PR's branch, end to end (docs/results.md): before a run, the worktree takes in
what reviewers pushed to its branch, and on request the PR's base; a conflict is left for the agent with
a note naming the files; nothing is ever forced, and uncommitted work is never lost.

Real git (origin a local bare repository, its recorded URL GitHub's), the fake GitHub API, real
PostgreSQL and Temporal, and small real agents: tests/agents/changer.py commits one file per run; the
tests/agents/resolver.py concludes a merge, keeping both sides of each conflict.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from activities.chat.platforms import deliverers
from activities.chat.replies import ReplyActivities
from activities.runs.queue import AgentRunActivities
from isolator.contracts.agent import QueueRunInput
from isolator.settings import Settings
from tests.agents import command
from tests.conftest import Stack
from tests.fakes.github_api import FakeGitHub
from tests.gitrepos import git
from tests.platforms.github import REPO, URL
from tests.results import eventually, final_message, say_on_issue, tip, with_github_origin, worktree_of

ISSUE = 42


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"agent_command_line": command("changer")})


def push_to(origin: Path, branch: str, clone: Path, name: str, content: str, message: str) -> str:
    """Someone else's commit on top of origin's `branch` (writing `name`), pushed; its SHA."""
    if not clone.exists():
        git("clone", "-q", "--branch", branch, str(origin), str(clone), cwd=origin.parent)
    git("pull", "-q", "--ff-only", "origin", branch, cwd=clone)
    (clone / name).write_text(content)
    git("add", "--", name, cwd=clone)
    git("commit", "-q", "-m", message, cwd=clone)
    git("push", "-q", "origin", f"HEAD:refs/heads/{branch}", cwd=clone)
    return git("rev-parse", "HEAD", cwd=clone).strip()


def is_ancestor(repository: Path, ancestor: str, descendant: str) -> bool:
    checked = subprocess.run(["git", "-C", str(repository), "merge-base", "--is-ancestor", ancestor, descendant])
    return checked.returncode == 0


async def run_message(stack: Stack, run_id: str) -> str:
    return await stack.db.fetchval("SELECT message FROM agent_runs WHERE id = $1::uuid", run_id)


async def run_ended(stack: Stack, run_id: str) -> None:
    async def ended() -> bool:
        status = await stack.db.fetchval("SELECT status FROM agent_runs WHERE id = $1::uuid", run_id)
        return status not in ("queued", "running")

    await eventually(ended, f"the end of run {run_id}")


async def opened_with_a_pr(stack: Stack, fake: FakeGitHub, repo: Path) -> tuple[Path, Path, str]:
    """The issue's first run, its PR opened: (origin, worktree, the first run's id)."""
    origin = fake.origin = with_github_origin(repo)
    fake.add_issue(REPO, ISSUE, title="Login fails")
    codebase = await stack.register(repo, url=URL)
    first = await say_on_issue(stack, ISSUE, "@isolator please fix the login", opened=True)
    await final_message(stack.db, first, "Draft PR #")
    return origin, worktree_of(stack, codebase, f"issue-{ISSUE}"), first


async def test_a_reviewers_commit_is_taken_in_and_the_agents_fix_lands_on_top(
    stack: Stack, fake: FakeGitHub, repo: Path, tmp_path: Path
) -> None:
    origin, worktree, _ = await opened_with_a_pr(stack, fake, repo)
    theirs = push_to(origin, "issue-42", tmp_path / "reviewer", "reviewer.txt", "a reviewer's fix\n",
                     "A reviewer's fix")

    run = await say_on_issue(stack, ISSUE, "@isolator more work")
    await final_message(stack.db, run, "(pushed 1 commit)")
    head = tip(worktree, "HEAD")
    assert head is not None and tip(origin, "refs/heads/issue-42") == head, "the service's push went through"
    assert git("rev-parse", "HEAD~1", cwd=worktree).strip() == theirs, "the agent's commit is right on top of theirs"
    assert is_ancestor(origin, theirs, head), "no force push: origin's old tip is in the new one"
    assert (worktree / "reviewer.txt").read_text() == "a reviewer's fix\n"
    message = await run_message(stack, run)
    assert message.startswith("Before this run, the service took in 1 commit that others pushed to `issue-42`"), message
    assert message.endswith("\n\n@isolator more work"), "the user's text follows the note"
    subject = git("log", "-1", "--format=%s", cwd=worktree).strip()
    assert subject == "work 2"


async def test_a_conflict_is_left_for_the_agent_with_a_note_and_nothing_is_lost(
    stack: Stack, fake: FakeGitHub, repo: Path, tmp_path: Path
) -> None:
    origin, worktree, _ = await opened_with_a_pr(stack, fake, repo)
    # The server's branch has a commit of its own (say, a push that was refused) on the line a reviewer changes too.
    (worktree / "work-1.txt").write_text("the server's line\n")
    git("commit", "-q", "-am", "Server's edit", cwd=worktree)
    mine = tip(worktree, "HEAD")
    theirs = push_to(origin, "issue-42", tmp_path / "reviewer", "work-1.txt", "the reviewer's line\n",
                     "The reviewer's edit")

    run = await say_on_issue(stack, ISSUE, "@isolator more work")
    await run_ended(stack, run)
    message = await run_message(stack, run)
    assert ("the service merged what others pushed to `issue-42` (origin) into the worktree, and these files "
            "conflict: work-1.txt. Resolve the conflict markers") in message, message
    assert message.endswith("@isolator more work")
    assert tip(origin, "refs/heads/issue-42") == theirs, "the reviewer's commit stays on origin, nothing forced"
    assert tip(worktree, "MERGE_HEAD") == theirs and tip(worktree, "HEAD") == mine, "the merge waits for the agent"
    conflicted = (worktree / "work-1.txt").read_text()
    assert "<<<<<<<" in conflicted and "the server's line" in conflicted and "the reviewer's line" in conflicted


async def test_a_dirty_worktree_loses_nothing(stack: Stack, fake: FakeGitHub, repo: Path, tmp_path: Path) -> None:
    origin, worktree, _ = await opened_with_a_pr(stack, fake, repo)
    (worktree / "draft.txt").write_text("an untracked draft\n")
    (worktree / "work-1.txt").write_text("an uncommitted edit\n")
    theirs = push_to(origin, "issue-42", tmp_path / "reviewer", "work-1.txt", "the reviewer's line\n",
                     "The reviewer's edit")

    run = await say_on_issue(stack, ISSUE, "@isolator nothing")
    await final_message(stack.db, run, "was refused")  # the service's push: origin has what the worktree lacks
    message = await run_message(stack, run)
    assert "but git would not merge it into the worktree, and nothing was changed" in message, message
    assert "work-1.txt" in message, "git's own reason names the file"
    assert (worktree / "draft.txt").read_text() == "an untracked draft\n"
    assert (worktree / "work-1.txt").read_text() == "an uncommitted edit\n"
    assert tip(origin, "refs/heads/issue-42") == theirs, "nothing forced"
    assert tip(worktree, "MERGE_HEAD") is None and not git("stash", "list", cwd=worktree).strip(), "nothing stashed"


async def test_a_run_asking_for_the_base_gets_it_merged_never_rebased(
    stack: Stack, fake: FakeGitHub, repo: Path, tmp_path: Path
) -> None:
    origin, worktree, first = await opened_with_a_pr(stack, fake, repo)
    pushed = tip(origin, "refs/heads/issue-42")
    assert pushed is not None
    # main moves on with a change to the file the branch added: a conflict with the PR.
    theirs = push_to(origin, "main", tmp_path / "colleague", "work-1.txt", "main's line\n", "Main's version")

    stack.settings.agent_command_line = command("resolver")
    row = await stack.db.fetchrow(
        "SELECT environment_id, platform, conversation_id FROM agent_runs WHERE id = $1::uuid", first)
    codebase_id = await stack.db.fetchval("SELECT codebase_id FROM isolation_environments WHERE id = $1",
                                          row["environment_id"])
    # As the pull-request loop hands `/update-branch` to the agent: a run queued with merge_base.
    queue = AgentRunActivities(stack.settings, stack.db, stack.temporal,
                               ReplyActivities(stack.db, deliverers(stack.settings, stack.db)))
    queued = await queue.queue_agent_run(QueueRunInput(
        str(row["environment_id"]), str(codebase_id), row["platform"], row["conversation_id"],
        "Bring this branch up to date with its base.", "test:update-branch", answered=True, merge_base=True))
    assert queued.outcome == "queued" and queued.run_id is not None
    await final_message(stack.db, queued.run_id, "(pushed 1 commit)")

    message = await run_message(stack, queued.run_id)
    assert "merged the base branch `main` (origin) into the worktree, and these files conflict: work-1.txt" in message
    head = tip(origin, "refs/heads/issue-42")
    assert head is not None and head == tip(worktree, "HEAD")
    parents = git("log", "-1", "--format=%P", head, cwd=origin).split()
    assert parents == [pushed, theirs], "a merge of main into the branch, not a rebase"
    assert is_ancestor(origin, pushed, head), "no force push"
    assert (worktree / "work-1.txt").read_text() == "please fix the login\nmain's line\n", "both sides kept"

    # The merge was concluded in the run's own view of the repository: the next run starts clean.
    stack.settings.agent_command_line = command("changer")
    later = await say_on_issue(stack, ISSUE, "@isolator more work")
    await final_message(stack.db, later, "(pushed 1 commit)")
    assert tip(worktree, "MERGE_HEAD") is None
    assert not (await run_message(stack, later)).startswith("Before this run")


async def test_an_unreachable_origin_does_not_hold_the_run_up(
    stack: Stack, fake: FakeGitHub, repo: Path, tmp_path: Path
) -> None:
    _, worktree, _ = await opened_with_a_pr(stack, fake, repo)
    git("remote", "set-url", "origin", str(tmp_path / "gone.git"), cwd=repo)

    run = await say_on_issue(stack, ISSUE, "@isolator more work")
    await final_message(stack.db, run, "— Done in")
    message = await run_message(stack, run)
    assert message.startswith("Before this run, `issue-42` could not be brought up to date with origin ("), message
    assert git("log", "-1", "--format=%s", cwd=worktree).strip() == "work 2", "the agent ran"
