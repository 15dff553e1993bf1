"""The real Claude Code, Codex and Aider CLIs as the conversation's agent, against fake model APIs:
a session per conversation, resumed on every message; progress lines, the final answer, cost and
tokens; errors in the agent's words. Real git, PostgreSQL and Temporal, through the test adapter."""

from __future__ import annotations

import re
import sys
import time
import shutil
import uuid
from pathlib import Path
from typing import AsyncIterator

import pytest

from activities.runs.output import WORKING_AFTER
from activities.runs.run_agent import MOVED_NOTICE, NEW_SESSION_NOTICE
from tests.agent_clis import (aider_binary, claude_binary, codex_binary, use_fake_anthropic,
                              use_fake_chat_completions, use_fake_openai)
from tests.agent_runs import finished_run, replies_when
from tests.conftest import Stack
from tests.fakes import anthropic_api, chat_completions_api, openai_api
from tests.fakes.model_api import FakeModelApi, run, text, write
from tests.gitrepos import git


@pytest.fixture
async def anthropic() -> AsyncIterator[anthropic_api.FakeAnthropicApi]:
    async with anthropic_api.FakeAnthropicApi() as api:
        yield api


@pytest.fixture
async def chat_completions() -> AsyncIterator[chat_completions_api.FakeChatCompletionsApi]:
    async with chat_completions_api.FakeChatCompletionsApi() as api:
        yield api


@pytest.fixture(params=["claude", "codex", "aider"])
async def agent(request: pytest.FixtureRequest, stack: Stack,
                monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeModelApi]:
    """The stack running the real CLI named by the parameter; its fake model API (only that one runs)."""
    if request.param == "aider":
        async with chat_completions_api.FakeChatCompletionsApi() as api:
            use_fake_chat_completions(monkeypatch, api)
            stack.settings.agent_driver, stack.settings.agent_executable = "aider", str(aider_binary())
            stack.settings.agent_args_line = f"--model openai/{chat_completions_api.MODEL}"
            yield api
    elif request.param == "claude":
        async with anthropic_api.FakeAnthropicApi() as api:
            use_fake_anthropic(monkeypatch, api)
            stack.settings.agent_driver, stack.settings.agent_executable = "claude", str(claude_binary())
            stack.settings.agent_args_line = "--allowedTools=Bash"
            yield api
    else:
        async with openai_api.FakeOpenAiApi() as api:
            use_fake_openai(monkeypatch, api, stack.tmp_path / "codex-home")
            stack.settings.agent_driver, stack.settings.agent_executable = "codex", str(codex_binary())
            yield api


async def test_a_conversation_keeps_its_session_and_sees_progress_cost_and_answer(
    stack: Stack, repo: Path, agent: FakeModelApi
) -> None:
    await stack.register(repo)
    conversation = f"drive-{uuid.uuid4().hex[:6]}"
    aider = agent.path == chat_completions_api.FakeChatCompletionsApi.path
    # The last reply waits a little, so the progress lines are seen before the answer. Aider's one reply
    # holds the file, the command and the text, and it runs the command last: the command waits instead.
    # Aider does not tell a command's exit code.
    command, ran = ("echo checked; sleep 2", "") if aider else ("echo checked", " (exit 0)")
    shown = f"$ `{command}`" if aider else f"{command}` → exit 0"
    agent.then(write("hello.txt", "hello"), run(command), text("I wrote hello.txt.", delay=0.0 if aider else 2.0))
    first = (await stack.say(conversation, "please write hello.txt"))["result"]
    progress = await replies_when(stack, conversation, lambda texts: len(texts) == 2 and "`hello.txt`" in texts[1]
                                  and shown in texts[1])
    assert "— Done" not in progress[1], "progress is shown while the agent works"
    run_record = await finished_run(stack, first["agentRunId"])
    assert run_record["status"] == "done"
    replies = await replies_when(stack, conversation, lambda texts: "— Done in" in texts[-1])
    answer = replies[1]
    assert answer.startswith(f"• wrote `hello.txt`\n• ran `{command}`{ran}\n\nI wrote hello.txt.\n\n— Done in"), answer
    assert "{" not in answer and "SEARCH" not in answer, "never the raw events, nor Aider's edit blocks"
    # Only the agent's work is the run's change: never Aider's history files (kept in the session's
    # folder) nor its repository map's cache (ignored through the repository's info/exclude).
    assert "1 file changed (`hello.txt`)." in answer and "tokens" in answer
    worktree = Path(first["workingPath"])
    assert (worktree / "hello.txt").read_text().strip() == "hello"
    if aider:
        assert list(worktree.glob(".aider.tags.cache.v*")) and not list(worktree.glob(".aider.*history*"))
        assert [line[3:] for line in git("status", "--porcelain", cwd=worktree).splitlines()] == ["hello.txt"]
    assert run_record["session_id"] and run_record["tokens"]["input"] >= (2000 if aider else 3000)
    if agent.path != "/v1/responses":  # Codex reports no money
        assert run_record["cost_usd"] > 0 and "$0.0" in answer
    log = (await stack.api.get(f"/api/runs/{first['agentRunId']}/log")).text
    assert ("Tokens: " if aider else '"type"') in log, "the agent's whole output is the run's log"

    agent.then(text("Added the test."))
    calls_before = len(agent.calls)
    second = (await stack.say(conversation, "now add a test for it"))["result"]
    second_record = await finished_run(stack, second["agentRunId"])
    assert second_record["status"] == "done"
    resumed = agent.calls[calls_before].text()
    assert "please write hello.txt" in resumed and "I wrote hello.txt." in resumed, "the agent saw the first exchange"
    # Aider has no session id of its own: the service's id names the folder of its history files.
    assert second_record["session_id"] == run_record["session_id"]
    await stack.say(conversation, "/status")
    replies = await replies_when(stack, conversation, lambda texts: "Agent session" in texts[-1])
    assert "2 turns" in replies[-1]


async def test_two_conversations_in_one_worktree_keep_their_own_sessions_and_reset_starts_over(
    stack: Stack, repo: Path, agent: FakeModelApi
) -> None:
    await stack.register(repo)
    first, second = f"share-a-{uuid.uuid4().hex[:6]}", f"share-b-{uuid.uuid4().hex[:6]}"
    agent.then(text("A one."))
    a1 = (await stack.say(first, "remember apples"))["result"]
    a1_run = await finished_run(stack, a1["agentRunId"])
    await stack.say(second, f"/worktree link {a1['branch']}")
    agent.then(text("B one."))
    calls_before = len(agent.calls)
    b1 = (await stack.say(second, "remember bananas"))["result"]
    b1_run = await finished_run(stack, b1["agentRunId"])
    assert b1["workingPath"] == a1["workingPath"]
    assert b1_run["session_id"] != a1_run["session_id"], "a session of its own"
    assert "apples" not in agent.calls[calls_before].text()

    reset = (await stack.say(first, "/reset"))["result"]
    assert reset["outcome"] == "command"
    said = await replies_when(stack, first, lambda texts: texts[-1].startswith("Reset:"))
    assert "1 turn" in said[-1]
    calls_before = len(agent.calls)
    a2 = (await stack.say(first, "what did I say?"))["result"]
    a2_run = await finished_run(stack, a2["agentRunId"])
    assert a2_run["session_id"] != a1_run["session_id"]
    assert "apples" not in agent.calls[calls_before].text(), "a reset session starts blind"

    # A conversation that moves to another worktree starts a new session there, and is told.
    third = f"share-c-{uuid.uuid4().hex[:6]}"
    c1 = (await stack.say(third, "remember cherries"))["result"]
    c1_run = await finished_run(stack, c1["agentRunId"])
    assert c1["workingPath"] != a1["workingPath"]
    await stack.say(third, f"/worktree link {a1['branch']}")
    calls_before = len(agent.calls)
    c2 = (await stack.say(third, "what did I say?"))["result"]
    c2_run = await finished_run(stack, c2["agentRunId"])
    assert c2_run["session_id"] != c1_run["session_id"] and "cherries" not in agent.calls[calls_before].text()
    replies = await replies_when(stack, third, lambda texts: "— Done" in texts[-1] and "what did I say" not in texts[-1])
    assert MOVED_NOTICE.strip("_") in replies[-1]

    # The agent forgot the session (its home was cleared; for Aider, its history files): the message
    # runs in a new one, and the user is told.
    if agent.path == chat_completions_api.FakeChatCompletionsApi.path:
        session = await stack.db.fetchval("SELECT id FROM agent_sessions WHERE conversation_id = $1", second)
        shutil.rmtree(stack.settings.agent_sessions_dir / str(session))
    else:
        await stack.db.execute("UPDATE agent_sessions SET agent_session_id = $1 WHERE conversation_id = $2",
                               str(uuid.uuid4()), second)
    b2 = (await stack.say(second, "still there?"))["result"]
    b2_run = await finished_run(stack, b2["agentRunId"])
    assert b2_run["status"] == "done"
    replies = await replies_when(stack, second, lambda texts: "— Done" in texts[-1])
    assert NEW_SESSION_NOTICE.strip("_") in replies[-1]


@pytest.mark.parametrize("failure, words", [
    ("refused_key", "refused the agent's credentials"),
    ("rate_limited", "usage limit or rate limit"),
    ("overloaded", "overloaded"),
    ("server_error", "failed or could not be reached"),
])
async def test_model_api_errors_get_a_clear_reply_quickly(
    stack: Stack, repo: Path, agent: FakeModelApi, failure: str, words: str
) -> None:
    await stack.register(repo)
    api = {"/v1/messages": anthropic_api, "/v1/responses": openai_api}.get(agent.path, chat_completions_api)
    step = getattr(api, failure)
    # Aider's litellm retries each request twice more itself: enough failures for all its tries.
    agent.then(*[step(3600) if failure == "rate_limited" else step() for _ in range(30)])
    conversation = f"fail-{uuid.uuid4().hex[:6]}"
    started = time.time()
    created = (await stack.say(conversation, "hello"))["result"]
    # Aider's own start-up (its Python imports: ~4 s, three times that on a loaded machine) is not what
    # this bounds: for it, the 30 s count from its first request to the model.
    aider = api is chat_completions_api
    record = await finished_run(stack, created["agentRunId"], seconds=60 if aider else 30)
    replies = await replies_when(stack, conversation, lambda texts: "— Failed" in texts[-1])
    assert time.time() - (agent.calls[0].at if aider else started) < 30
    assert record["status"] == "failed" and words in replies[-1], replies[-1]
    if failure == "refused_key":  # said once, after the closing line; the hint names this agent's own key
        assert [line for line in replies[-1].splitlines() if line.strip()][0].startswith("— Failed"), replies[-1]
        other = {"/v1/messages": "OPENAI_API_KEY", "/v1/responses": "ANTHROPIC_API_KEY"}.get(agent.path)
        assert other is None or other not in replies[-1], replies[-1]
    if failure == "rate_limited" and api is openai_api:
        assert "it resets at" in replies[-1]
    if failure == "rate_limited" and api is chat_completions_api:
        assert "it resets in 3600s" in replies[-1]


async def test_a_silent_agent_shows_that_it_works(stack: Stack, repo: Path) -> None:
    stack.settings.agent_command_line = f"{sys.executable} -c 'import time; time.sleep(14); print(\"done\")'"
    await stack.register(repo)
    conversation = f"silent-{uuid.uuid4().hex[:6]}"
    created = (await stack.say(conversation, "think hard"))["result"]
    # The working line or, had it never shown, the run's end: how soon the agent starts after the
    # message is the machine's business, so the line's own count says when it came.
    replies = await replies_when(stack, conversation, lambda texts: len(texts) == 2 and (
        "Working…" in texts[1] or "— Done" in texts[1]), seconds=120)
    working = re.search(r"Working… (\d+) s so far", replies[1])
    assert working is not None, f"no working line while the agent was silent: {replies}"
    assert int(working.group(1)) >= WORKING_AFTER
    assert (await finished_run(stack, created["agentRunId"]))["status"] == "done"
    final = await replies_when(stack, conversation, lambda texts: "— Done" in texts[-1])
    assert "Working…" not in final[-1] and final[-1].startswith("done")


async def test_budgets_pause_a_run_and_keep_runs_from_starting(
    stack: Stack, repo: Path, anthropic: anthropic_api.FakeAnthropicApi, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_anthropic(monkeypatch, anthropic)
    stack.settings.agent_driver, stack.settings.agent_executable = "claude", str(claude_binary())
    await stack.register(repo)
    conversation = f"budget-{uuid.uuid4().hex[:6]}"
    first = (await stack.say(conversation, "hello"))["result"]
    spent = await finished_run(stack, first["agentRunId"])
    assert spent["cost_usd"] > 0
    stack.settings.agent_daily_budget_usd = spent["cost_usd"] / 2
    calls = len(anthropic.calls)
    second = (await stack.say(conversation, "again"))["result"]
    refused = await finished_run(stack, second["agentRunId"])
    replies = await replies_when(stack, conversation, lambda texts: "daily budget" in texts[-1])
    assert refused["status"] == "failed" and "renews at midnight UTC" in replies[-1]
    assert len(anthropic.calls) == calls, "no run started"
    totals = (await stack.api.get("/api/runs/totals", params={"conversation": f"test:{conversation}"})).json()
    assert totals["runs"] == 2 and totals["cost_usd"] == pytest.approx(spent["cost_usd"])

    stack.settings.agent_daily_budget_usd = None
    stack.settings.agent_max_cost_usd = 0.001
    anthropic.then(run("echo one"), run("echo two"), run("echo three"))
    third = (await stack.say(conversation, "go on"))["result"]
    capped = await finished_run(stack, third["agentRunId"])
    replies = await replies_when(stack, conversation, lambda texts: "Continue with another" in texts[-1])
    assert capped["status"] == "waiting" and "AGENT_MAX_COST_USD" in replies[-1], "it asks to go on (docs/approvals.md)"
    assert "Paused" in replies[-2] and "at its budget" in replies[-2]


async def test_aider_past_its_budget_is_stopped_and_asks_to_continue(
    stack: Stack, repo: Path, chat_completions: chat_completions_api.FakeChatCompletionsApi,
    monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_chat_completions(monkeypatch, chat_completions)
    stack.settings.agent_driver, stack.settings.agent_executable = "aider", str(aider_binary())
    stack.settings.agent_args_line = f"--model openai/{chat_completions_api.MODEL}"
    stack.settings.agent_max_cost_usd = 0.001  # one reply of gpt-4o's price costs more
    await stack.register(repo)
    conversation = f"aider-budget-{uuid.uuid4().hex[:6]}"
    chat_completions.then(write("costly.txt", "x"), run("sleep 30"), text("Wrote it."))
    created = (await stack.say(conversation, "write costly.txt"))["result"]
    record = await finished_run(stack, created["agentRunId"], seconds=60)
    replies = await replies_when(stack, conversation, lambda texts: "Continue with another" in texts[-1])
    assert record["status"] == "waiting" and "AGENT_MAX_COST_USD" in replies[-1], replies[-1]
    assert record["cost_usd"] > 0.001


async def test_the_example_agent_of_make_dev_speaks_claudes_events_and_keeps_a_session(stack: Stack, repo: Path) -> None:
    example = str(Path(__file__).resolve().parents[2] / "examples" / "agent.py")
    # A codebase's own driver, set through the API, as `make dev` sets AGENT and AGENT_EXECUTABLE.
    codebase = await stack.register(repo, agent={"agent": "claude", "executable": example})
    assert codebase["agent"] == {"agent": "claude", "executable": example, "args": []}
    for bad in ({"agent": "command"}, {"agent": "gpt"}, {"agent": "claude", "args": "--model x"}):
        refused = await stack.api.patch(f"/api/codebases/{codebase['id']}", json={"agent": bad})
        assert refused.status_code == 422, bad
    conversation = f"example-{uuid.uuid4().hex[:6]}"
    first = (await stack.say(conversation, "remember the milk"))["result"]
    assert (await finished_run(stack, first["agentRunId"]))["status"] == "done"
    replies = await replies_when(stack, conversation, lambda texts: "— Done" in texts[-1])
    assert replies[-1].startswith("• wrote `NOTES.md`\n• ran `git status --short` (exit 0)\n\nI took a note")
    assert "first message of our session" in replies[-1] and "tokens" in replies[-1]
    second = (await stack.say(conversation, "and the eggs"))["result"]
    assert (await finished_run(stack, second["agentRunId"]))["status"] == "done"
    # Under load a "Queued" note may come between: the second answer is the last message.
    replies = await replies_when(stack, conversation, lambda texts: "— Done" in texts[-1] and "milk" in texts[-1])
    assert "Earlier in this conversation you said: “remember the milk”." in replies[-1]
