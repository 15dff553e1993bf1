"""The pull-request loop end to end (docs/pr-loop.md): red CI on the head the service pushed, and a
review, come back to the agent as one run each, within AUTOFIX_MAX_ATTEMPTS.

Real git (origin a local bare repository, its recorded URL GitHub's), the fake GitHub API serving check
suites, annotations, workflow runs, job logs and reviews to the real PyGithub, real PostgreSQL and
Temporal, and a small real agent (tests/agents/changer.py) that commits one file per run."""

from __future__ import annotations

from pathlib import Path

import pytest

from isolator.contracts.pr_loop import LoopDecision
from isolator.settings import Settings
from tests.agents import command
from tests.conftest import Stack
from tests.fakes.github_api import FakeGitHub
from tests.fakes.github_checks import Annotation, Check, Job, Step
from tests.gitrepos import git
from tests.platforms.github import REPO, URL, comment_event, deliver, repository
from tests.platforms.github_prs import settle
from tests.platforms.github_ci import check_suite_completed, pull_request_review_submitted, workflow_run_completed
from tests.results import final_message, say_on_issue, tip, with_github_origin, worktree_of
from workflows.chat.pr_loop_texts import UPDATE_BRANCH_USAGE
from workflows.pr_loop import PullRequestLoopWorkflow

ISSUE = 42


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"agent_command_line": command("changer"), "autofix_max_attempts": 2})


def push_on_branch(origin: Path, branch: str, clone: Path) -> str:
    """A person's commit on top of `branch`, pushed to origin; its SHA."""
    git("clone", "-q", "--branch", branch, str(origin), str(clone), cwd=origin.parent)
    (clone / "reviewer.txt").write_text("a reviewer's fix\n")
    git("add", ".", cwd=clone)
    git("commit", "-q", "-m", "A reviewer's fix", cwd=clone)
    git("push", "-q", "origin", f"HEAD:refs/heads/{branch}", cwd=clone)
    return git("rev-parse", "HEAD", cwd=clone).strip()


async def command_on_issue(stack: Stack, text: str) -> str:
    """A command in the issue's conversation; its reply."""
    response, delivery = await deliver(stack, "issue_comment", comment_event(ISSUE, text))
    assert response.status_code == 202, response.text
    result = await settle(stack, delivery)
    assert result.outcome == "command", result
    (reply,) = result.replies
    return reply


async def issue_with_a_pr(stack: Stack, fake: FakeGitHub, repo: Path) -> tuple[Path, int, str]:
    """The issue's first run, its draft PR opened: (origin, the PR's number, the head the service pushed)."""
    origin = fake.origin = with_github_origin(repo)
    fake.add_issue(REPO, ISSUE)
    await stack.register(repo, url=URL)
    first = await say_on_issue(stack, ISSUE, "@isolator please fix the login", opened=True)
    await final_message(stack.db, first, "Draft PR #")
    head = tip(origin, "refs/heads/issue-42")
    assert head is not None
    return origin, fake.created_pulls[0]["number"], head


async def loop_result(stack: Stack, workflow_id: str) -> LoopDecision:
    handle = stack.temporal.get_workflow_handle_for(PullRequestLoopWorkflow.run, workflow_id)
    return await handle.result()


async def red(stack: Stack, fake: FakeGitHub, sha: str, number: int, branch: str = "issue-42") -> str:
    """A failing check suite (with an annotation) and a failing Actions run (with a log) on `sha`, each
    delivered twice, as check_suite and workflow_run; returns the loop's workflow id."""
    suite = fake.checks.add_check_suite(REPO, sha, "failure", head_branch=branch, pull_numbers=(number,),
                                        check_runs=[
        Check("lint", "failure", title="1 problem", summary="ruff found 1 problem",
              annotations=[Annotation("app/main.py", 7, "F401 `os` imported but unused")])])
    run = fake.checks.add_workflow_run(REPO, sha, branch, "failure", pull_numbers=(number,), jobs=[
        Job("tests", "failure",
            steps=[Step("Check out"), Step("Run tests", "failure", "collected 3 items\nAssertionError: 1 != 2")])])
    ids = set()
    for _ in range(2):
        for event, payload in (
            ("check_suite", check_suite_completed(REPO, suite.suite_id, sha, branch, "failure", (number,),
                                                  api_url=fake.api_url)),
            ("workflow_run", workflow_run_completed(REPO, run.run_id, sha, branch, "failure", (number,),
                                                    check_suite_id=run.check_suite_id, api_url=fake.api_url)),
        ):
            response, _ = await deliver(stack, event, payload)
            assert response.status_code == 202, response.text
            ids.add(response.json()["workflow_id"])
    (workflow_id,) = ids  # both event kinds, each twice: one workflow
    return workflow_id


async def test_red_ci_on_the_pushed_head_is_fixed_until_the_cap_and_a_persons_push_resets(
    stack: Stack, fake: FakeGitHub, repo: Path, tmp_path: Path
) -> None:
    origin = fake.origin = with_github_origin(repo)
    fake.add_issue(REPO, ISSUE, title="Login fails")
    codebase = await stack.register(repo, url=URL)
    first = await say_on_issue(stack, ISSUE, "@isolator please fix the login", opened=True)
    await final_message(stack.db, first, "Draft PR #")
    (pull,) = fake.created_pulls
    number, worktree = pull["number"], worktree_of(stack, codebase, "issue-42")
    head = tip(origin, "refs/heads/issue-42")
    assert head is not None

    # Attempt 1: one run, whose message names the failing checks, the annotation and the log's failing lines.
    decision = await loop_result(stack, await red(stack, fake, head, number))
    assert decision.outcome == "run" and decision.run_id is not None, decision
    message = await stack.db.fetchval("SELECT message FROM agent_runs WHERE id = $1::uuid", decision.run_id)
    assert message.startswith(f"CI failed on {head[:7]}"), message
    assert "lint" in message and "tests" in message
    assert "app/main.py:7" in message and "F401 `os` imported but unused" in message
    assert "AssertionError: 1 != 2" in message and "attempt 1 of 2" in message
    assert await stack.db.fetchval("SELECT count(*) FROM agent_runs") == 2, "one run for four deliveries"
    await final_message(stack.db, decision.run_id, "(pushed 1 commit)")
    fixed = tip(origin, "refs/heads/issue-42")
    assert fixed != head and fixed == tip(worktree, "HEAD"), "the fix is pushed to the PR's branch"
    comments = [comment.body for comment in fake.comments if comment.number == ISSUE]
    assert any(f"CI failed on `{head[:7]}`" in body and "attempt 1 of 2" in body for body in comments), comments

    # Attempt 2 on the fix's head, still red.
    second = await loop_result(stack, await red(stack, fake, fixed, number))
    assert second.outcome == "run" and "attempt 2 of 2" in await stack.db.fetchval(
        "SELECT message FROM agent_runs WHERE id = $1::uuid", second.run_id)
    await final_message(stack.db, second.run_id, "(pushed 1 commit)")
    third_head = tip(origin, "refs/heads/issue-42")

    # The third red head: fixing stops, said in the conversation and on the PR, once.
    stopped = await loop_result(stack, await red(stack, fake, third_head, number))
    assert stopped.outcome == "stopped", stopped
    assert await stack.db.fetchval("SELECT count(*) FROM agent_runs") == 3
    on_pr = [comment.body for comment in fake.comments if comment.number == number and "fixing stopped" in comment.body]
    in_issue = [comment.body for comment in fake.comments
                if comment.number == ISSUE and "fixing stopped" in comment.body]
    assert len(on_pr) == 1 and len(in_issue) == 1, (on_pr, in_issue)

    # A person pushes: red CI on their head starts nothing, and the count starts again.
    theirs = push_on_branch(origin, "issue-42", tmp_path / "reviewer")
    ignored = await loop_result(stack, await red(stack, fake, theirs, number))
    assert ignored.outcome == "ignored" and "did not push" in ignored.reason, ignored
    assert await stack.db.fetchval("SELECT count(*) FROM agent_runs") == 3
    counts = await stack.db.fetchrow("SELECT fix_attempts, fixing_stopped FROM pull_requests WHERE number = $1", number)
    assert (counts["fix_attempts"], counts["fixing_stopped"]) == (0, None)
    told = [comment.body for comment in fake.comments if comment.number == ISSUE and "did not push" in comment.body]
    assert len(told) == 1 and "`/fix-ci`" in told[0], told

    # `/fix-ci` asks for it anyway: one run on the person's head, counted; `/status` and the API show the count.
    assert await command_on_issue(stack, "@isolator /fix-ci") == "The agent works on CI's failures."
    assert await stack.db.fetchval("SELECT count(*) FROM agent_runs") == 4
    # (The run's record starts with what the worktree took in before it: the person's commit.)
    asked = await stack.db.fetchval("SELECT message FROM agent_runs WHERE message LIKE $1",
                                    f"%CI failed on {theirs[:7]}%")
    assert asked is not None and "attempt 1 of 2" in asked, asked
    status = await command_on_issue(stack, "@isolator /status")
    assert f"CI: red on `{theirs[:7]}`, 1 of 2 fix runs made" in status, status
    environment_id = await stack.db.fetchval(
        "SELECT id FROM isolation_environments WHERE branch_name = 'issue-42' AND status = 'active'")
    environment = (await stack.api.get(f"/api/environments/{environment_id}")).json()
    pr = environment["pull_request"]
    assert (pr["ci_sha"], pr["ci_state"], pr["fix_attempts"], pr["max_fix_attempts"]) == (theirs, "red", 1, 2), pr
    page = (await stack.api.get(f"/environments/{environment_id}")).text  # the dashboard's environment page
    assert f"CI red on <code>{theirs[:7]}</code>" in page and '<span id="fixes">1 of 2 CI fix runs</span>' in page


async def test_a_green_head_after_fixes_is_said_once_and_the_draft_marked_ready(
    stack: Stack, fake: FakeGitHub, repo: Path
) -> None:
    stack.settings.results_ready_when_green = True
    origin, number, head = await issue_with_a_pr(stack, fake, repo)
    fix = await loop_result(stack, await red(stack, fake, head, number))
    await final_message(stack.db, fix.run_id, "(pushed 1 commit)")
    fixed = tip(origin, "refs/heads/issue-42")
    assert fixed is not None

    suite = fake.checks.add_check_suite(REPO, fixed, "success", head_branch="issue-42", pull_numbers=(number,),
                                        check_runs=[Check("lint", "success"), Check("tests", "success")])
    for _ in range(2):
        response, _ = await deliver(stack, "check_suite", check_suite_completed(
            REPO, suite.suite_id, fixed, "issue-42", "success", (number,), api_url=fake.api_url))
        assert (await loop_result(stack, response.json()["workflow_id"])).outcome == "passed"
    passed = [comment.body for comment in fake.comments if comment.number == ISSUE and "CI passed" in comment.body]
    assert passed == [f"CI passed on `{fixed[:7]}` after 1 fix."], passed
    assert fake.marked_ready == [number], "marked once, though reported twice"
    assert fake.pulls_of(REPO)[0]["draft"] is False


async def test_a_review_with_three_inline_comments_is_one_run_and_each_thread_gets_a_reply(
    stack: Stack, fake: FakeGitHub, repo: Path
) -> None:
    origin, number, head = await issue_with_a_pr(stack, fake, repo)
    review = fake.checks.add_review(REPO, number, "CHANGES_REQUESTED", "A few things before this goes in.", [
        ("app/main.py", 12, None, "@@ -10,3 +10,4 @@\n def login():\n+    return None", "Return the user here"),
        ("app/main.py", 30, 27, "@@ -25,6 +25,8 @@\n+    x = 1\n+    y = 2", "These two lines can go"),
        ("README.md", 3, None, "@@ -1,3 +1,3 @@\n-Old\n+New", "Say what changed"),
    ], user="reviewer")
    payload = pull_request_review_submitted(REPO, number, review.review_id, "changes_requested",
                                            "A few things before this goes in.", "reviewer", head, "issue-42",
                                            api_url=fake.api_url)
    for _ in range(2):
        response, _ = await deliver(stack, "pull_request_review", payload)
        assert response.status_code == 202, response.text
    decision = await loop_result(stack, response.json()["workflow_id"])
    assert decision.outcome == "run", decision
    assert await stack.db.fetchval("SELECT count(*) FROM agent_runs") == 2, "one run for the review"
    message = await stack.db.fetchval("SELECT message FROM agent_runs WHERE id = $1::uuid", decision.run_id)
    for expected in ("reviewer", "A few things before this goes in.", "app/main.py", "line 12", "lines 27-30",
                     "README.md", "Return the user here", "These two lines can go", "Say what changed",
                     "+    return None"):
        assert expected in message, (expected, message)
    assert tip(origin, "refs/heads/issue-42") != head, "the fix is pushed to the PR's branch"
    replies = {reply.in_reply_to for reply in fake.checks.replies}
    assert replies == set(review.comment_ids) and len(fake.checks.replies) == 3, fake.checks.replies


async def test_an_approval_and_a_strangers_review_start_nothing(stack: Stack, fake: FakeGitHub, repo: Path) -> None:
    fake.origin = with_github_origin(repo)
    fake.add_issue(REPO, ISSUE)
    await stack.register(repo, url=URL)
    first = await say_on_issue(stack, ISSUE, "@isolator please fix the login", opened=True)
    await final_message(stack.db, first, "Draft PR #")
    number = fake.created_pulls[0]["number"]
    approval = pull_request_review_submitted(REPO, number, 1, "approved", "", "reviewer", "a" * 40, "issue-42")
    response, _ = await deliver(stack, "pull_request_review", approval)
    assert (response.status_code, response.json()["status"]) == (200, "ignored")
    stranger = pull_request_review_submitted(REPO, number, 2, "changes_requested", "rm -rf", "mallory", "a" * 40,
                                             "issue-42", association="NONE")
    response, _ = await deliver(stack, "pull_request_review", stranger)
    assert (response.status_code, response.json()["status"]) == (200, "ignored"), response.text
    assert "association" in response.json()["reason"]
    assert await stack.db.fetchval("SELECT count(*) FROM agent_runs") == 1


def push_event(ref: str, after: str) -> dict:
    """A `push` delivery (octokit/webhooks push.payload.json, the fields the service reads)."""
    return {"ref": ref, "before": "0" * 40, "after": after, "created": False, "deleted": False, "forced": False,
            "repository": repository(), "pusher": {"name": "octocat"}, "sender": {"login": "octocat", "type": "User"}}


async def conflicting_base(stack: Stack, fake: FakeGitHub, repo: Path, tmp_path: Path) -> tuple[Path, int, str, str]:
    """The issue's PR, then main changing the file the branch added: (origin, PR number, the PR's pushed
    head, main's new head)."""
    origin, number, pushed = await issue_with_a_pr(stack, fake, repo)
    clone = tmp_path / "maintainer"
    git("clone", "-q", "--branch", "main", str(origin), str(clone), cwd=tmp_path)
    (clone / "work-1.txt").write_text("main's line\n")
    git("add", "work-1.txt", cwd=clone)
    git("commit", "-q", "-m", "Main's version", cwd=clone)
    git("push", "-q", "origin", "HEAD:refs/heads/main", cwd=clone)
    stack.settings.agent_command_line = command("resolver")
    return origin, number, pushed, git("rev-parse", "HEAD", cwd=clone).strip()


def merged_not_forced(origin: Path, pushed: str, base: str) -> None:
    head = tip(origin, "refs/heads/issue-42")
    assert head is not None
    parents = git("log", "-1", "--format=%P", head, cwd=origin).split()
    assert parents == [pushed, base], "the base merged into the branch, not rebased"
    git("merge-base", "--is-ancestor", pushed, head, cwd=origin)  # no force push: the old head is in the new
    git("merge-base", "--is-ancestor", base, head, cwd=origin)  # so the PR merges into main cleanly


async def test_a_base_that_no_longer_merges_gets_one_run_that_merges_it(
    stack: Stack, fake: FakeGitHub, repo: Path, tmp_path: Path
) -> None:
    origin, number, pushed, base = await conflicting_base(stack, fake, repo, tmp_path)
    fake.checks.set_mergeable(REPO, number, False, "dirty")

    for _ in range(2):  # redelivered: one run
        response, _ = await deliver(stack, "push", push_event("refs/heads/main", base))
        assert response.status_code == 202, response.text
    assert (await loop_result(stack, response.json()["workflow_id"])).outcome == "ignored", "each PR on its own"
    decision = await loop_result(stack, f"pr-loop:{REPO}:base:{base}:{number}")
    assert decision.outcome == "run" and decision.run_id is not None, decision
    await final_message(stack.db, decision.run_id, "(pushed 1 commit)")
    merged_not_forced(origin, pushed, base)
    assert await stack.db.fetchval("SELECT count(*) FROM agent_runs") == 2
    counted = await stack.db.fetchrow("SELECT fix_attempts, ci_sha FROM pull_requests WHERE number = $1", number)
    assert (counted["fix_attempts"], counted["ci_sha"]) == (1, None), "counted toward the cap; not a CI verdict"

    # A push to another branch, or a PR that still merges, starts nothing.
    response, _ = await deliver(stack, "push", push_event("refs/heads/feature", "b" * 40))
    assert response.json()["status"] == "ignored"


async def test_update_branch_asks_for_the_base_by_hand(
    stack: Stack, fake: FakeGitHub, repo: Path, tmp_path: Path
) -> None:
    origin, _, pushed, base = await conflicting_base(stack, fake, repo, tmp_path)
    assert await command_on_issue(stack, "@isolator /update-branch") == "The agent merges the base into the branch."
    run_id = await stack.db.fetchval(
        "SELECT id::text FROM agent_runs WHERE message LIKE '%Bring this branch up to date%'")
    assert run_id is not None
    await final_message(stack.db, run_id, "(pushed 1 commit)")
    merged_not_forced(origin, pushed, base)
    assert await command_on_issue(stack, "@isolator /update-branch now") == UPDATE_BRANCH_USAGE


async def test_a_chats_pr_gets_its_ci_lines_and_fix_runs_in_the_chat(
    stack: Stack, fake: FakeGitHub, repo: Path
) -> None:
    origin = fake.origin = with_github_origin(repo)
    await stack.register(repo, url=URL)
    created = (await stack.say("loop-chat", "add a health check"))["result"]
    await final_message(stack.db, created["agentRunId"], "— Done in")
    await stack.say("loop-chat", "/pr Add a health check")
    (pull,) = fake.created_pulls
    head = tip(origin, f"refs/heads/{created['branch']}")
    assert head is not None

    decision = await loop_result(stack, await red(stack, fake, head, pull["number"], created["branch"]))
    assert decision.outcome == "run", decision
    conversation = await stack.db.fetchval("SELECT conversation_id FROM agent_runs WHERE id = $1::uuid", decision.run_id)
    assert conversation == "loop-chat", "the fix runs in the chat whose work the PR is"
    await final_message(stack.db, decision.run_id, "(pushed 1 commit)")
    assert any(text.startswith(f"CI failed on `{head[:7]}`") for text in await stack.replies("loop-chat"))
