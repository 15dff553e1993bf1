"""The coding agent works in the worktree: each message that is not a command runs it there, with the
message on its standard input, its answer streamed back and the run kept. Real git, PostgreSQL and
Temporal, through the test adapter, with small real agent programs (tests/agents/)."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import pytest

from activities.runs.answer import MAX_MESSAGES
from isolator.settings import Settings
from tests.agent_runs import finished_run, replies_when, run_of, runs_idle
from tests.agents import command
from tests.conftest import Stack
from tests.gitrepos import git
from tests.visibility import found

# Values no other variable of the machine holds by chance (a PATH-like value may well contain "hook").
SECRETS = {"DATABASE_URL": "postgresql://secret-7f3a", "GITHUB_TOKEN": "ghp_secret7f3a",
           "SLACK_BOT_TOKEN": "xoxb-secret7f3a", "API_TOKEN": "api-secret-7f3a", "TELEGRAM_BOT_TOKEN": "123:secret7f3a",
           "SLACK_SIGNING_SECRET": "signing-7f3a", "GITHUB_WEBHOOK_SECRET": "hook-7f3a",
           "TELEGRAM_WEBHOOK_SECRET": "tg-7f3a", "DISCORD_BOT_TOKEN": "discord-7f3a"}


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"agent_command_line": command("reporter")})


async def test_a_message_runs_the_agent_in_its_worktree_and_its_answer_streams_back(
    stack: Stack, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    await stack.register(repo)

    created = (await stack.say("agent-1", "@isolator please add answer.txt"))["result"]
    assert created["outcome"] == "created" and created["agentRunId"]
    run = await finished_run(stack, created["agentRunId"])
    assert run["status"] == "done" and run["exit_code"] == 0

    worktree = Path(created["workingPath"])
    report = json.loads((worktree / "agent-report.json").read_text())
    assert report["cwd"] == str(worktree)
    assert report["stdin"] == "please add answer.txt", "the bot's mention is stripped"
    assert report["stdin_closed"]
    env = report["env"]
    assert env["ISOLATOR_MESSAGE"] == "@isolator please add answer.txt"
    assert (env["ISOLATOR_PLATFORM"], env["ISOLATOR_CONVERSATION"]) == ("test", "agent-1")
    assert env["ISOLATOR_BRANCH"] == created["branch"] and env["ISOLATOR_WORKTREE"] == str(worktree)
    assert env["ISOLATOR_ENVIRONMENT_ID"] == created["environmentId"]
    assert env["ISOLATOR_RUN_ID"] == created["agentRunId"]
    assert not set(SECRETS) & set(env), "none of the service's secrets reaches the agent"
    assert not any(value in json.dumps(env) for value in SECRETS.values())

    replies = await replies_when(stack, "agent-1", lambda texts: len(texts) == 2 and "— Done in" in texts[1])
    assert replies[0].startswith(f"Working in isolated branch `{created['branch']}`")
    answer = replies[1]  # one message, updated in place to its final text
    assert answer.startswith("Reading the code…\nYou said: please add answer.txt\nDone thinking.")
    # The report it left untracked counts as changed, as git reports it.
    assert "2 files changed (`agent-report.json`, `answer.txt`); 1 commit made." in answer
    assert run["changed_files"] == ["agent-report.json", "answer.txt"] and run["commits"] == 1
    assert git("log", "-1", "--format=%s", cwd=worktree).strip() == "answer"

    detail = (await stack.api.get(f"/api/runs/{created['agentRunId']}")).json()
    assert detail["output"].startswith("Reading the code…\n") and detail["message"] == "@isolator please add answer.txt"
    log = await stack.api.get(f"/api/runs/{created['agentRunId']}/log")
    assert log.status_code == 200 and log.text == "warning: nothing serious\n"
    listed = (await stack.api.get("/api/runs", params={"conversation": "test:agent-1"})).json()
    assert [item["id"] for item in listed] == [created["agentRunId"]]
    by_environment = (await stack.api.get("/api/runs", params={"environment": created["environmentId"]})).json()
    assert [item["id"] for item in by_environment] == [created["agentRunId"]]

    # The next message reuses the worktree, silently, and runs the agent again.
    await runs_idle(stack, created["environmentId"])
    again = (await stack.say("agent-1", "and again"))["result"]
    assert again["outcome"] == "reused" and again["replies"] == []
    assert (await finished_run(stack, again["agentRunId"]))["status"] == "done"


async def test_commands_never_reach_the_agent(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    created = (await stack.say("agent-2", "hello"))["result"]
    await finished_run(stack, created["agentRunId"])
    status = (await stack.say("agent-2", "/status"))["result"]
    assert status["outcome"] == "command" and status["agentRunId"] is None
    runs = (await stack.api.get("/api/runs", params={"conversation": "test:agent-2"})).json()
    assert len(runs) == 1


async def test_a_redelivered_message_starts_no_second_run(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    delivery = uuid.uuid4().hex  # the Temporal server is shared by the whole session
    first = (await stack.say("agent-3", "hello", messageId=delivery))["result"]
    await finished_run(stack, first["agentRunId"])
    response = await stack.api.post("/test/message", json={"conversationId": "agent-3", "message": "hello",
                                                           "messageId": delivery})
    assert response.status_code == 200
    runs = (await stack.api.get("/api/runs", params={"conversation": "test:agent-3"})).json()
    assert len(runs) == 1


@pytest.mark.parametrize("setting, problem", [
    ("/nowhere/agent --flag", "`/nowhere/agent` was not found"),
    (str(Path(__file__)), "is not executable"),
])
async def test_an_agent_that_cannot_start_gets_a_reply_naming_the_setting(
    stack: Stack, repo: Path, setting: str, problem: str
) -> None:
    stack.settings.agent_command_line = setting
    await stack.register(repo)
    created = (await stack.say("agent-4", "hello"))["result"]
    run = await finished_run(stack, created["agentRunId"])
    assert run["status"] == "failed"
    replies = await replies_when(stack, "agent-4", lambda texts: len(texts) == 2)
    assert problem in replies[1] and "check AGENT_COMMAND" in replies[1]
    # Nothing else is affected: commands are answered, and the worktree stays.
    assert (await stack.say("agent-4", "/status"))["result"]["outcome"] == "command"
    assert Path(created["workingPath"]).is_dir()


async def test_a_codebase_can_name_its_own_agent_or_none(stack: Stack, repo: Path, tmp_path: Path) -> None:
    codebase = await stack.register(repo, agent_command=[os.sys.executable, "-c", "print('codebase agent')"])
    assert codebase["agent_command"][-1] == "print('codebase agent')"
    created = (await stack.say("agent-5", "hello"))["result"]
    assert (await run_of(stack, created["agentRunId"]))["message"] == "hello"
    await finished_run(stack, created["agentRunId"])
    replies = await replies_when(stack, "agent-5", lambda texts: len(texts) == 2 and "Done" in texts[1])
    assert replies[1].startswith("codebase agent\n")

    changed = await stack.api.patch(f"/api/codebases/{codebase['id']}", json={"agent_command": []})
    assert changed.status_code == 200 and changed.json()["agent_command"] == []
    quiet = (await stack.say("agent-5", "hello again"))["result"]
    assert quiet["agentRunId"] is None

    reset = await stack.api.patch(f"/api/codebases/{codebase['id']}", json={"agent_command": None})
    assert reset.json()["agent_command"] is None
    default = (await stack.say("agent-5", "third"))["result"]
    assert (await finished_run(stack, default["agentRunId"]))["status"] == "done"

    for bad in ({"agent_command": "claude -p"}, {"agent_command": [""]}, {"agent_command": ["a\x00"]}, {"other": 1}):
        refused = await stack.api.patch(f"/api/codebases/{codebase['id']}", json=bad)
        assert refused.status_code == 422, bad
    missing = await stack.api.patch(f"/api/codebases/{uuid.uuid4()}", json={"agent_command": []})
    assert missing.status_code == 404


async def test_each_run_is_found_in_the_temporal_ui_by_conversation_branch_and_outcome(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    conversation = f"search-run-{uuid.uuid4().hex[:8]}"
    created = (await stack.say(conversation, "hello"))["result"]
    await finished_run(stack, created["agentRunId"])
    run_workflow = f"agent-run:{created['agentRunId']}"
    query = (f"IsolatorConversation = 'test:{conversation}' AND IsolatorBranch = '{created['branch']}' "
             "AND IsolatorOutcome = 'done' AND WorkflowType = 'AgentRunWorkflow'")
    assert await found(stack.temporal, query, run_workflow), query


async def test_an_agent_that_floods_its_output_keeps_memory_and_records_bounded(stack: Stack, repo: Path) -> None:
    """12 MiB without a newline, then a failure: the record keeps 10 MiB and says where it was cut;
    the conversation gets a bounded number of messages and is told where the rest is."""
    stack.settings.agent_command_line = command("flood", "12", "3")
    await stack.register(repo)
    created = (await stack.say("flood-1", "go"))["result"]
    run = await finished_run(stack, created["agentRunId"], seconds=120)
    assert run["status"] == "failed" and run["exit_code"] == 3 and run["output_cut"]
    size, tail = await stack.db.fetchrow(
        "SELECT octet_length(output), right(output, 100) FROM agent_runs WHERE id = $1",
        uuid.UUID(created["agentRunId"]))
    assert 10 * 2**20 <= size < 10 * 2**20 + 200
    assert "cut here: output past 10 MiB is not kept" in tail
    log = (await stack.api.get(f"/api/runs/{created['agentRunId']}/log")).text
    assert log.splitlines()[-1] == "error line 29"
    replies = await replies_when(stack, "flood-1", lambda texts: any("Failed with exit code 3" in t for t in texts))
    assert len(replies) <= 1 + MAX_MESSAGES
    closing = next(text for text in replies if "Failed with exit code 3" in text)
    assert f"GET /api/runs/{created['agentRunId']}" in closing and "error line 29" in closing
