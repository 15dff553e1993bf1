"""Results, end to end: after a run ends `done`, the service commits what the agent left, pushes the
environment's own branch to origin and opens (once) or updates the pull request.

Real git (the checkout's `origin` is a local bare repository, its recorded URL GitHub's), the fake
GitHub API driven by PyGithub, real PostgreSQL and Temporal, and a small real agent (tests/agents/changer.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from temporalio.client import WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from isolator.settings import Settings
from tests.agents import command
from tests.conftest import Stack
from tests.fakes.github_api import FakeGitHub
from tests.gitrepos import git
from tests.platforms.github import REPO, URL
from tests.platforms.github_prs import FORK, open_pr, push_commit
from tests.results import eventually, final_message, say_on_issue, tip, with_github_origin, worktree_of
from workflows.agent_run import agent_run_workflow_id
from workflows.chat.pull_requests import PR_USAGE

MARKER = "<!-- isolator-run:"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"agent_command_line": command("changer")})


async def test_an_issue_gets_one_draft_pr_and_later_runs_push_to_it(
    stack: Stack, fake: FakeGitHub, repo: Path
) -> None:
    origin = fake.origin = with_github_origin(repo)
    fake.add_issue(REPO, 42, title="Login fails on Safari")
    codebase = await stack.register(repo, url=URL)

    first = await say_on_issue(stack, 42, "@isolator please fix the login", opened=True)
    line = await final_message(stack.db, first, "Draft PR #")
    worktree = worktree_of(stack, codebase, "issue-42")
    assert tip(origin, "refs/heads/issue-42") == tip(worktree, "HEAD"), "the branch is on origin at the worktree's tip"
    (pull,) = fake.created_pulls
    assert (pull["head"]["ref"], pull["base"]["ref"], pull["draft"]) == ("issue-42", "main", True)
    assert pull["title"] == "Login fails on Safari"
    assert pull["body"].startswith("Closes #42\n") and "please fix the login" in pull["body"]
    assert f"Draft PR #{pull['number']}: https://github.com/{REPO}/pull/{pull['number']}" in line
    assert line.startswith("Done: please fix the login") and "— Done in" in line, "added to the run's own message"

    # The next run leaves its change uncommitted: the service commits it, pushes, comments once, opens nothing.
    second = await say_on_issue(stack, 42, "@isolator now leave notes\nwith a second line")
    line = await final_message(stack.db, second, "(pushed 1 commit)")
    assert f"Draft PR #{pull['number']}" in line
    assert tip(origin, "refs/heads/issue-42") == tip(worktree, "HEAD")
    assert len(fake.created_pulls) == 1
    message = git("log", "-1", "--format=%B", cwd=worktree)
    assert message.strip() == (f"now leave notes\n\nIsolator-Conversation: github:{REPO}#42\nIsolator-Run: {second}")
    who = git("log", "-1", "--format=%an <%ae>|%cn <%ce>", cwd=worktree).strip()
    assert who == "changer agent <changer@agents.isolator.invalid>|isolator <isolator@localhost>"
    committed = git("show", "--name-only", "--format=", "HEAD", cwd=worktree).split()
    assert committed == ["notes.txt"], "build.log is ignored by .gitignore and stays out"
    assert git("status", "--porcelain", cwd=worktree).strip() == ""
    comments = [comment for comment in fake.comments if comment.number == pull["number"]]
    assert len(comments) == 1 and f"{MARKER} {second} -->" in comments[0].body

    # A run that changes nothing delivers nothing and says nothing of it.
    third = await say_on_issue(stack, 42, "@isolator nothing to do")
    assert "PR #" not in await final_message(stack.db, third, "— Done in")
    assert len([comment for comment in fake.comments if comment.number == pull["number"]]) == 1


async def test_a_rejected_push_is_told_with_gits_reason_and_nothing_is_lost(
    stack: Stack, fake: FakeGitHub, repo: Path, tmp_path: Path
) -> None:
    origin = fake.origin = with_github_origin(repo)
    fake.add_issue(REPO, 7)
    codebase = await stack.register(repo, url=URL)
    first = await say_on_issue(stack, 7, "@isolator fix it", opened=True)
    await final_message(stack.db, first, "Draft PR #")
    worktree = worktree_of(stack, codebase, "issue-7")

    colleague = tmp_path / "colleague"  # origin moves on: a colleague pushes to the branch
    git("clone", "-q", "--branch", "issue-7", str(origin), str(colleague), cwd=tmp_path)
    moved = push_commit(origin, "refs/heads/issue-7", colleague, "A colleague's fix")
    # The worktree holds a file of that name uncommitted: taking the colleague's commit in before the run
    # would overwrite it, so it is not taken in (docs/results.md), and the push after the run is refused.
    (worktree / "colleague.txt").write_text("the server's own notes\n")
    second = await say_on_issue(stack, 7, "@isolator more work")
    line = await final_message(stack.db, second, "was refused")
    assert "[rejected]" in line and ("fetch first" in line or "non-fast-forward" in line)
    assert tip(origin, "refs/heads/issue-7") == moved, "nothing was forced"
    mine = tip(worktree, "HEAD")
    # (The agent was told the branch could not be brought up to date; the note's words made it change nothing.)
    assert git("log", "-1", "--format=%s", cwd=worktree).strip() == "more work", "the work stays on the server's branch"
    assert (worktree / "colleague.txt").read_text() == "the server's own notes\n"

    third = await say_on_issue(stack, 7, "@isolator nothing")  # the next run is not blocked
    await final_message(stack.db, third, "— Done in")
    assert len(fake.created_pulls) == 1
    # Its worktree clean again, the colleague's commit was merged in before it: both changed `colleague.txt`,
    # and the conflict was left for the agent, which left it. Nothing of a half-made merge is committed or pushed.
    line = await final_message(stack.db, third, "The work stays on the server")
    assert "a merge in it is unfinished (conflicts left in colleague.txt)" in line, line
    assert tip(worktree, "HEAD") == mine and tip(worktree, "MERGE_HEAD") == moved
    assert tip(origin, "refs/heads/issue-7") == moved


async def test_a_same_repository_pr_pushes_to_its_own_branch_and_opens_nothing(
    stack: Stack, fake: FakeGitHub, repo: Path
) -> None:
    origin = fake.origin = with_github_origin(repo)
    sha = push_commit(origin, "refs/heads/feature/x", repo.parent / "developer")
    codebase = await stack.register(repo, url=URL)
    result = await open_pr(stack, fake, 99, "feature/x", sha)
    assert result.run_id
    line = await final_message(stack.db, result.run_id, "Pushed 1 commit to `feature/x`")
    worktree = worktree_of(stack, codebase, "feature/x")
    assert tip(origin, "refs/heads/feature/x") == tip(worktree, "HEAD") != sha
    assert f"PR #99: https://github.com/{REPO}/pull/99" in line
    assert fake.created_pulls == []


async def test_a_fork_pr_pushes_nothing_and_says_where_the_work_is(
    stack: Stack, fake: FakeGitHub, repo: Path
) -> None:
    origin = fake.origin = with_github_origin(repo)
    sha = push_commit(origin, "refs/pull/98/head", repo.parent / "contributor")
    await stack.register(repo, url=URL)
    refs_before = git("for-each-ref", cwd=origin)
    result = await open_pr(stack, fake, 98, "feature/y", sha, head_repo=FORK)
    assert result.run_id
    line = await final_message(stack.db, result.run_id, "comes from a fork")
    assert "`pr-98-review`" in line and "/worktree why pr-98-review" in line
    assert git("for-each-ref", cwd=origin) == refs_before and fake.created_pulls == []


@pytest.mark.parametrize("switch", ["pull_request_off", "results_off"])
async def test_switched_off_nothing_is_pushed(stack: Stack, fake: FakeGitHub, repo: Path, switch: str) -> None:
    config = '[results]\npull_request = "off"\n' if switch == "pull_request_off" else None
    origin = fake.origin = with_github_origin(repo, config)
    if switch == "results_off":
        stack.settings.results = "off"
    fake.add_issue(REPO, 5)
    await stack.register(repo, url=URL)
    run = await say_on_issue(stack, 5, "@isolator fix it", opened=True)
    line = await final_message(stack.db, run, "— Done in")
    if switch == "pull_request_off":
        line = await final_message(stack.db, run, 'pull_request = "off"')
        assert "nothing was pushed" in line
    else:
        await eventually(lambda: _run_ended(stack, run), "the environment's step after the run")
        assert "PR" not in (await final_message(stack.db, run, "— Done in"))
    assert tip(origin, "refs/heads/issue-5") is None and fake.created_pulls == []


async def _run_ended(stack: Stack, run_id: str) -> bool:
    """The run's record workflow has been told the run ended (after the results' step)."""
    try:
        described = await stack.temporal.get_workflow_handle(agent_run_workflow_id(run_id)).describe()
    except RPCError as error:  # not started yet
        assert error.status == RPCStatusCode.NOT_FOUND
        return False
    return described.status == WorkflowExecutionStatus.COMPLETED


async def test_pr_in_a_chat_opens_a_pr_that_later_runs_push_to_and_status_shows(
    stack: Stack, fake: FakeGitHub, repo: Path
) -> None:
    origin = fake.origin = with_github_origin(repo)
    await stack.register(repo, url=URL)
    created = (await stack.say("chat-pr", "add a health check"))["result"]
    branch, worktree = created["branch"], Path(created["workingPath"])
    await eventually(lambda: _run_ended(stack, created["agentRunId"]), "the first run and its results' step")
    assert tip(origin, f"refs/heads/{branch}") is None, "a chat pushes nothing before `/pr`"

    assert (await stack.say("chat-pr", "/pr"))["result"]["replies"] == [PR_USAGE]
    opened = (await stack.say("chat-pr", "/pr Add a health check"))["result"]
    (pull,) = fake.created_pulls
    assert opened["replies"] == [f"Draft PR #{pull['number']}: https://github.com/{REPO}/pull/{pull['number']}"]
    assert (pull["title"], pull["head"]["ref"], pull["base"]["ref"], pull["draft"]) == (
        "Add a health check", branch, "main", True)
    assert tip(origin, f"refs/heads/{branch}") == tip(worktree, "HEAD")
    again = (await stack.say("chat-pr", "/pr Another title"))["result"]
    assert again["replies"][0].startswith(f"Draft PR #{pull['number']}:") and len(fake.created_pulls) == 1

    later = (await stack.say("chat-pr", "and a readiness check"))["result"]
    await final_message(stack.db, later["agentRunId"], "(pushed 1 commit)")
    assert tip(origin, f"refs/heads/{branch}") == tip(worktree, "HEAD")
    assert len([comment for comment in fake.comments if comment.number == pull["number"]]) == 1

    fake.set_checks(tip(worktree, "HEAD") or "", statuses=("success",), check_runs=(("in_progress", None),))
    fake.pulls_of(REPO)[0]["head"]["sha"] = tip(worktree, "HEAD")
    status = (await stack.say("chat-pr", "/status"))["result"]["replies"][0]
    assert (f"PR: draft #{pull['number']} (open), checks: 1 pending, 1 passed, "
            f"https://github.com/{REPO}/pull/{pull['number']}") in status
    view = (await stack.api.get(f"/api/environments/{created['environmentId']}")).json()
    assert view["pull_request"] == {
        "number": pull["number"], "url": f"https://github.com/{REPO}/pull/{pull['number']}", "repository": REPO,
        "branch": branch, "base": "main", "title": "Add a health check", "draft": True, "state": "open",
        "checks": "1 pending, 1 passed", "origin": "opened",
        # the pull-request loop's counts (docs/pr-loop.md): CI has not reported on a head yet
        "ci_sha": None, "ci_state": None, "fix_attempts": 0, "max_fix_attempts": 3, "fixing_stopped": None}
