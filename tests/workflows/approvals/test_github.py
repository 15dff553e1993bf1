"""Asking the human on a GitHub issue: no buttons; the request lists the comments that answer it.
The setting: conftest.py."""

from __future__ import annotations

from pathlib import Path

from tests.approvals import (
    TOOL_LABELS, allow_once_script, allowed_push_answered, approval_state, conversation_runs_when_ended, deny_script,
    until,
)
from tests.conftest import Stack
from tests.fakes.anthropic_api import FakeAnthropicApi
from tests.fakes.github_api import FakeGitHub
from tests.platforms import github as github_platform


async def github_issue(stack: Stack, github: FakeGitHub, number: int, said: str) -> Path:
    """An issue opened by octocat, mentioning the bot, in the registered repository's GitHub project; its worktree."""
    github.add_issue(github_platform.REPO, number)
    response, delivery = await github_platform.deliver(
        stack, "issues", github_platform.issues_event("opened", number, f"@isolator {said}"))
    assert response.status_code == 202, response.text
    resolution = await github_platform.resolution(stack, delivery)
    assert resolution.outcome == "created" and resolution.working_path, resolution
    return Path(resolution.working_path)


async def github_request(github: FakeGitHub) -> github_platform.RequestComment:
    def listed() -> bool:
        return any("Answer with a comment:" in posted.body for posted in github.comments)

    await until(listed, "a GitHub comment listing the answers")
    return github_platform.request_comment(github)


def github_texts(github: FakeGitHub) -> list[str]:
    return [posted.body for posted in github.comments] + [body for _, body in github.edits]


def github_answered(github: FakeGitHub, code: str) -> str:
    """The request's comment as its last edit left it."""
    return [body for _, body in github.edits if f"`{code}`" in body][-1]


async def test_github_approve_runs_the_push_and_the_run_ends_with_its_answer(
        stack: Stack, github: FakeGitHub, claude: FakeAnthropicApi) -> None:
    allow_once_script(claude)
    await github_issue(stack, github, 7, "push it please")
    asked = await github_request(github)
    assert asked.number == 7 and "git push origin HEAD" in asked.body
    assert list(asked.commands) == TOOL_LABELS

    refused = await github_platform.comment(stack, github, 7, asked.commands["Allow once"], login="mallory")
    assert refused.status_code == 200, refused.text
    refusal = "@mallory: Only the person who started this run, or an admin, may answer it."
    await until(lambda: any(posted.body == refusal for posted in github.comments), "the refusal, to mallory")
    assert await approval_state(stack, asked.code) == "pending", "another person's comment decides nothing"

    taken = await github_platform.comment(stack, github, 7, asked.commands["Allow once"])
    assert taken.status_code == 200, taken.text
    await allowed_push_answered(stack, claude, f"github:{github_platform.REPO}#7", "@octocat",
                                lambda: github_texts(github))
    answered = github_answered(github, asked.code)
    assert answered.endswith("✅ Allowed once by @octocat") and "/approve" not in answered, answered
    assert [content for _, content in github.reactions] == ["+1"], "the answering comment is acknowledged"
    assert await approval_state(stack, asked.code) == "allowed"


async def test_github_deny_keeps_the_command_from_running_and_the_agent_is_told(
        stack: Stack, github: FakeGitHub, claude: FakeAnthropicApi) -> None:
    deny_script(claude)
    worktree = await github_issue(stack, github, 8, "touch denied.txt")
    asked = await github_request(github)

    taken = await github_platform.comment(stack, github, 8, f"/deny {asked.code} not on main")
    assert taken.status_code == 200, taken.text
    runs = await conversation_runs_when_ended(stack, f"github:{github_platform.REPO}#8", 2)
    assert [item["status"] for item in runs] == ["waiting", "done"]
    assert not (worktree / "denied.txt").exists(), "denied, the command never ran"
    told = claude.conversation_texts(len(claude.calls) - 1)
    assert "@octocat denied this call" in told and "not on main" in told
    await until(lambda: any("Understood, I left it." in said for said in github_texts(github)), "the answer")
    answered = github_answered(github, asked.code)
    assert "🚫 Denied by @octocat" in answered and "not on main" in answered and "/deny" not in answered
