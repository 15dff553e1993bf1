"""Asking the human (docs/approvals.md), end to end through the test adapter: the real Claude Code
against the fake Anthropic API, real git, PostgreSQL, Temporal and bubblewrap. A rule makes a call
wait for a person; the run ends its turn without it, the request comes with buttons, and the answer
resumes the session."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import pytest

from activities.runs.approvals import ApprovalRecords
from isolator.contracts.approvals import ApprovalAsk
from tests.approvals import (  # noqa: F401 - claude: the fixture
    approval,
    approval_in,
    claude,
    press,
    request_of,
    runs_when_ended,
    waiting_for_answer,
)
from tests.conftest import Stack
from tests.gitrepos import git
from tests.fakes.anthropic_api import FakeAnthropicApi
from tests.fakes.model_api import run, text, tool


def conversation() -> str:
    return f"ask-{uuid.uuid4().hex[:6]}"


async def test_allow_once_runs_the_call_and_the_run_goes_on_to_its_answer(
        stack: Stack, repo: Path, claude: FakeAnthropicApi) -> None:
    await stack.register(repo)
    talk = conversation()
    claude.then(run("touch pushed.txt"), run("touch pushed.txt"), text("Touched it."))
    first = (await stack.say(talk, "touch pushed.txt please", user="alice"))["result"]
    asked = await request_of(stack, talk)
    assert "touch pushed.txt" in asked["text"] and "alice" in asked["text"]
    assert [button["label"] for button in asked["buttons"]] == ["Allow once", "Allow for this conversation", "Deny"]
    worktree = Path(first["workingPath"])
    assert not (worktree / "pushed.txt").exists(), "the call waits for the answer"

    status, body = await press(stack, asked["code"], "once", user="mallory")
    assert status == 403 and "started this run" in body["detail"]
    assert (await approval(stack, asked["code"]))["state"] == "pending", "a stranger's press decides nothing"

    status, body = await press(stack, asked["code"], "once", user="alice")
    assert status == 200, body
    runs = await runs_when_ended(stack, talk, 2)
    assert [run["status"] for run in runs] == ["waiting", "done"]
    assert (worktree / "pushed.txt").exists(), "allowed, the command ran"
    resumed = claude.conversation_texts(len(claude.calls) - 2)
    assert "alice approved this call" in resumed
    replies = await stack.replies(talk)
    assert any("ran `touch pushed.txt` (exit 0)" in reply and "Touched it." in reply for reply in replies), replies
    edited = next(reply for reply in replies if asked["code"] in reply)
    assert "Allowed once by alice" in edited
    answered = await approval(stack, asked["code"])
    assert answered["state"] == "allowed" and answered["answered_by"] == "alice" and answered["answered_at"]
    status, body = await press(stack, asked["code"], "deny", user="alice")
    assert status == 409 and "already allowed by alice" in body["detail"]
    page = (await stack.api.get(f"/runs/{first['agentRunId']}")).text
    assert asked["code"] in page and "allowed by alice at" in page and "touch pushed.txt" in page, \
        "the run's page names who answered"


async def test_deny_keeps_the_call_from_running_and_the_agent_is_told(
        stack: Stack, repo: Path, claude: FakeAnthropicApi) -> None:
    await stack.register(repo)
    talk = conversation()
    claude.then(run("touch denied.txt"), text("Understood, I left it."))
    first = (await stack.say(talk, "touch denied.txt"))["result"]
    asked = await request_of(stack, talk)
    status, _ = await press(stack, asked["code"], "deny", reason="not on main")
    assert status == 200
    runs = await runs_when_ended(stack, talk, 2)
    assert [run["status"] for run in runs] == ["waiting", "done"]
    assert not (Path(first["workingPath"]) / "denied.txt").exists()
    told = claude.conversation_texts(len(claude.calls) - 1)
    assert "tester denied this call" in told and "not on main" in told
    replies = await stack.replies(talk)
    assert any("Understood, I left it." in reply for reply in replies)
    assert any("Denied by tester" in reply and "not on main" in reply for reply in replies)


async def test_a_question_of_the_agent_gets_buttons_and_its_answer_reaches_the_model(
        stack: Stack, repo: Path, claude: FakeAnthropicApi) -> None:
    await stack.register(repo)
    talk = conversation()
    question = {"questions": [{"question": "Which database?", "header": "DB", "multiSelect": False,
                               "options": [{"label": "Postgres", "description": "the big one"},
                                           {"label": "SQLite", "description": "a file"}]}]}
    claude.then(tool("AskUserQuestion", question), text("SQLite it is."))
    await stack.say(talk, "add a database")
    asked = await request_of(stack, talk)
    assert "Which database?" in asked["text"]
    assert [button["label"] for button in asked["buttons"]] == ["Postgres", "SQLite"]
    status, _ = await press(stack, asked["code"], "option", option=1)
    assert status == 200
    await runs_when_ended(stack, talk, 2)
    resumed = claude.conversation_texts(len(claude.calls) - 1)
    assert "Which database?" in resumed and "SQLite" in resumed and "answered by tester" in resumed


async def test_allow_for_this_conversation_asks_no_more_there_but_another_conversation_is_asked(
        stack: Stack, repo: Path, claude: FakeAnthropicApi) -> None:
    await stack.register(repo)
    talk, other = conversation(), conversation()
    claude.then(run("touch kept.txt"), run("touch kept.txt"), text("Once."))
    await stack.say(talk, "touch kept.txt")
    asked = await request_of(stack, talk)
    assert (await press(stack, asked["code"], "conversation"))[0] == 200
    await runs_when_ended(stack, talk, 2)

    claude.then(run("touch kept.txt"), text("Again, unasked."))
    await stack.say(talk, "once more")
    runs = await runs_when_ended(stack, talk, 3)
    assert runs[-1]["status"] == "done", "the same call is not asked again in this conversation"
    assert len([item for item in (await stack.api.get("/api/approvals")).json()]) == 1

    claude.then(run("touch kept.txt"), text("Never."))
    await stack.say(other, "touch kept.txt")
    assert (await request_of(stack, other))["code"] != asked["code"], "another conversation is asked"


async def test_no_answer_is_a_denial_at_the_timeout_and_the_agent_is_told(
        stack: Stack, repo: Path, claude: FakeAnthropicApi) -> None:
    stack.settings.approval_timeout_hours = 2 / 3600  # two seconds
    await stack.register(repo)
    talk = conversation()
    claude.then(run("touch late.txt"), text("Nobody answered; I stopped there."))
    first = (await stack.say(talk, "touch late.txt"))["result"]
    asked = await request_of(stack, talk)
    runs = await runs_when_ended(stack, talk, 2)
    assert [run["status"] for run in runs] == ["waiting", "done"]
    assert not (Path(first["workingPath"]) / "late.txt").exists()
    assert "Nobody answered within" in claude.conversation_texts(len(claude.calls) - 1)
    await approval_in(stack, asked["code"], "timed_out")
    assert any("No answer in time" in reply for reply in await stack.replies(talk))


async def test_a_run_past_its_budget_asks_to_continue_and_continue_resumes_it_with_a_new_cap(
        stack: Stack, repo: Path, claude: FakeAnthropicApi) -> None:
    stack.settings.agent_max_cost_usd = 0.001  # the fake's first answer costs more
    await stack.register(repo)
    talk = conversation()
    claude.then(run("echo one"), text("Went on after the budget."))
    await stack.say(talk, "spend")
    asked = await request_of(stack, talk)
    assert "Continue with another" in asked["text"] and "AGENT_MAX_COST_USD" in asked["text"]
    assert [button["label"] for button in asked["buttons"]] == ["Continue", "Stop"]
    stack.settings.agent_max_cost_usd = None  # the continuation runs to its end
    assert (await press(stack, asked["code"], "continue"))[0] == 200
    runs = await runs_when_ended(stack, talk, 2)
    assert [run["status"] for run in runs] == ["waiting", "done"]
    assert "allowed this run to spend more" in claude.conversation_texts(len(claude.calls) - 1)

    stack.settings.agent_max_cost_usd = 0.001
    claude.then(run("echo two"), text("never said"))
    await stack.say(talk, "spend again")
    stopped = await request_of(stack, talk, other_than=asked["code"])
    calls = len(claude.calls)
    assert (await press(stack, stopped["code"], "stop"))[0] == 200
    await approval_in(stack, stopped["code"], "stopped")
    runs = await runs_when_ended(stack, talk, 3)
    assert [run["status"] for run in runs] == ["waiting", "done", "stopped"], "Stop ended it: no longer waiting"
    assert len(claude.calls) == calls, "Stop ends it: no resumed request"


async def test_stop_ends_the_wait_and_later_messages_queue_behind_it(
        stack: Stack, repo: Path, claude: FakeAnthropicApi) -> None:
    await stack.register(repo)
    talk = conversation()
    claude.then(run("touch never.txt"), text("after the stop"))
    await stack.say(talk, "touch never.txt")
    asked = await request_of(stack, talk)
    queued = (await stack.say(talk, "and then this"))["result"]
    status = await stack.say(talk, "/status")
    assert any(asked["code"] in reply and "Waiting" in reply for reply in await stack.replies(talk)), \
        "/status shows what waits"
    await stack.say(talk, "/stop")
    runs = await runs_when_ended(stack, talk, 2)
    assert runs[0]["status"] == "stopped", "the run whose wait /stop ended is recorded stopped, no longer waiting"
    await approval_in(stack, asked["code"], "stopped")
    assert queued["agentRunId"] in [run["id"] for run in runs] and status


async def test_budget_plus_raises_todays_budget_and_the_next_run_starts(
        stack: Stack, repo: Path, claude: FakeAnthropicApi) -> None:
    await stack.register(repo)
    talk = conversation()
    first = (await stack.say(talk, "hello"))["result"]
    spent = (await runs_when_ended(stack, talk, 1))[0]["cost_usd"]
    assert first["agentRunId"] and spent > 0
    stack.settings.agent_daily_budget_usd = spent / 2
    await stack.say(talk, "again")
    refused = await runs_when_ended(stack, talk, 2)
    assert refused[-1]["status"] == "failed" and any("/budget +10" in reply for reply in await stack.replies(talk))
    raised = await stack.say(talk, "/budget +1", user="boss")
    assert "Raised today's budget by $1.00 (boss)" in raised["result"]["replies"][0]
    assert "+$1.00 by boss" in (await stack.say(talk, "/budget"))["result"]["replies"][0]
    assert "Usage" in (await stack.say(talk, "/budget -5"))["result"]["replies"][0]
    await stack.say(talk, "and now")
    assert (await runs_when_ended(stack, talk, 3))[-1]["status"] == "done"


async def test_a_plan_is_shown_and_approve_resumes_the_session_to_carry_it_out(
        stack: Stack, repo: Path, claude: FakeAnthropicApi) -> None:
    stack.settings.agent_args_line = "--permission-mode plan"
    await stack.register(repo)
    talk = conversation()
    claude.then(tool("ExitPlanMode", {"plan": "1. Add the table.\n2. Migrate."}), text("Carried it out."))
    await stack.say(talk, "plan a migration")
    asked = await request_of(stack, talk)
    assert "The agent's plan" in asked["text"] and "Add the table." in asked["text"]
    assert [button["label"] for button in asked["buttons"]] == ["Approve", "Revise"]
    assert (await press(stack, asked["code"], "approve"))[0] == 200
    runs = await runs_when_ended(stack, talk, 2)
    assert [run["status"] for run in runs] == ["waiting", "done"]
    assert "approved your plan" in claude.conversation_texts(len(claude.calls) - 1)
    await approval_in(stack, asked["code"], "allowed")


async def test_a_repository_asks_more_through_its_committed_isolator_toml(
        stack: Stack, repo: Path, claude: FakeAnthropicApi) -> None:
    stack.settings.agent_approvals_line = None  # the operator asks nothing
    (repo / ".isolator.toml").write_text('[approvals]\nask = ["Bash(echo:*)"]\n')
    git("add", ".isolator.toml", cwd=repo)
    git("commit", "-q", "-m", "ask before echo", cwd=repo)
    await stack.register(repo)
    talk = conversation()
    claude.then(run("echo hello"), text("never"))
    await stack.say(talk, "say hello")
    asked = await request_of(stack, talk)
    assert "echo hello" in asked["text"]


@pytest.mark.parametrize("reply", ["after the run ended", "before the run ended"])
async def test_the_asker_answers_a_question_in_their_own_words_by_replying(
        stack: Stack, repo: Path, claude: FakeAnthropicApi, monkeypatch: pytest.MonkeyPatch, reply: str) -> None:
    """The question is sent just before the run that asked ends: a reply may reach the service first."""
    run_ended = asyncio.Event()
    if reply == "before the run ended":
        asks = ApprovalRecords.ask_person

        async def ask_then_end_once_replied(self: ApprovalRecords, *args: Any) -> ApprovalAsk:
            asked = await asks(self, *args)
            await asyncio.wait_for(run_ended.wait(), 90)
            return asked
        monkeypatch.setattr(ApprovalRecords, "ask_person", ask_then_end_once_replied)
    await stack.register(repo)
    talk = conversation()
    question = {"questions": [{"question": "Which database?", "header": "DB", "multiSelect": False,
                               "options": [{"label": "Postgres", "description": "a server"},
                                           {"label": "SQLite", "description": "a file"}]}]}
    claude.then(tool("AskUserQuestion", question), text("MySQL then."))
    first = (await stack.say(talk, "add a database", user="alice"))["result"]
    asked = await request_of(stack, talk)
    if reply == "after the run ended":
        await waiting_for_answer(stack, first["environmentId"])
    await stack.say(talk, "neither: MySQL, we already run it", user="alice")  # handed to the environment
    run_ended.set()
    runs = await runs_when_ended(stack, talk, 2)
    assert [run["status"] for run in runs] == ["waiting", "done"], "the reply is the answer, not another run"
    resumed = claude.conversation_texts(len(claude.calls) - 1)
    assert "answered by alice" in resumed and "MySQL, we already run it" in resumed
    answered = await approval_in(stack, asked["code"], "answered")
    assert answered["answered_by"] == "alice" and answered["answer_text"] == "neither: MySQL, we already run it"
