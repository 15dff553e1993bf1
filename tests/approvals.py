"""Asking the human in the tests: the request a run sent (its buttons), a press on the test adapter,
and the runs of a conversation, read through the API as a user would."""

from __future__ import annotations

import asyncio
import uuid
from typing import AsyncIterator, Awaitable, Callable

import asyncpg
import pytest
from temporalio import workflow
from temporalio.client import Client, WorkflowHandle
from temporalio.worker import Worker

from isolator.contracts.approvals import Decision, DecisionTaken, parse_press_value
from isolator.contracts.environment import environment_workflow_id
from tests.agent_clis import claude_binary, use_fake_anthropic
from tests.agent_runs import ENDED
from workflows.environment import EnvironmentWorkflow
from tests.fakes.anthropic_api import FakeAnthropicApi
from tests.fakes.model_api import run, text
from tests.conftest import Stack

RULE = "ask: Bash(git push:*), Bash(touch:*)"


def use_approvals(stack: Stack, rules: str = RULE) -> None:
    stack.settings.agent_approvals_line = rules


@pytest.fixture
async def claude(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeAnthropicApi]:
    """The real Claude Code as the agent, against the fake Anthropic API, with RULE's approvals
    (a test module imports it to use it)."""
    async with FakeAnthropicApi() as api:
        use_fake_anthropic(monkeypatch, api)
        stack.settings.agent_driver, stack.settings.agent_executable = "claude", str(claude_binary())
        use_approvals(stack)
        yield api


async def request_of(stack: Stack, conversation: str, other_than: str | None = None, seconds: float = 90) -> dict:
    """The conversation's request that still shows its buttons (not the one of code `other_than`), once
    sent: its text, buttons and code."""
    for _ in range(int(seconds * 20)):
        response = await stack.api.get(f"/test/messages/{conversation}")
        asked = [item for item in response.json()["messages"] if item.get("buttons")
                 and (other_than is None or other_than not in item["message"])]
        if asked:
            item = asked[-1]
            pressed = parse_press_value(item["buttons"][0]["value"])
            assert pressed is not None, item
            return {"text": item["message"], "buttons": item["buttons"], "code": pressed.code}
        await asyncio.sleep(0.05)
    raise AssertionError(f"no request in {conversation}: {(await stack.replies(conversation))}")


async def press(stack: Stack, code: str, choice: str, user: str = "tester", **fields: object) -> tuple[int, dict]:
    response = await stack.api.post(f"/test/approvals/{code}", json={"choice": choice, "user": user, **fields})
    return response.status_code, response.json()


async def runs_of(stack: Stack, conversation: str) -> list[dict]:
    """Oldest first."""
    response = await stack.api.get("/api/runs", params={"conversation": f"test:{conversation}"})
    assert response.status_code == 200, response.text
    return list(reversed(response.json()))


async def runs_when_ended(stack: Stack, conversation: str, count: int, seconds: float = 90) -> list[dict]:
    """The conversation's runs once there are `count` and all have ended."""
    for _ in range(int(seconds * 20)):
        runs = await runs_of(stack, conversation)
        if len(runs) >= count and all(run["status"] in ENDED for run in runs):
            return runs
        await asyncio.sleep(0.05)
    raise AssertionError(f"runs of {conversation}: {[(run['status'], run['message'][:40]) for run in runs]}")


async def waiting_for_answer(stack: Stack, environment_id: str, seconds: float = 90) -> None:
    """Once the environment's workflow waits for an answer (the run that asked has ended there)."""
    handle = stack.temporal.get_workflow_handle_for(EnvironmentWorkflow.run, environment_workflow_id(environment_id))
    for _ in range(int(seconds * 20)):
        if (await handle.query(EnvironmentWorkflow.state)).awaiting is not None:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"environment {environment_id} waits for no answer")


async def approval(stack: Stack, code: str) -> dict:
    listed = (await stack.api.get("/api/approvals")).json()
    return next(item for item in listed if item["code"] == code)


# --- any platform (tests/workflows/test_approvals_platforms.py) ----------------------------------


async def until(condition: Callable[[], bool], what: str, seconds: float = 90) -> None:
    for _ in range(int(seconds * 20)):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"not in time: {what}")


async def approval_code(stack: Stack, platform: str, conversation_id: str) -> str:
    """The code of the conversation's one request."""
    (code,) = [row["code"] for row in await stack.db.fetch(
        "SELECT code FROM approvals WHERE platform = $1 AND conversation_id = $2", platform, conversation_id)]
    return code


async def approval_state(stack: Stack, code: str) -> str:
    return await stack.db.fetchval("SELECT state FROM approvals WHERE code = $1", code)


async def conversation_runs_when_ended(stack: Stack, conversation: str, count: int, seconds: float = 90) -> list[dict]:
    """The runs of `platform:conversation id`, oldest first, once there are `count` and all have ended."""
    runs: list[dict] = []
    for _ in range(int(seconds * 20)):
        response = await stack.api.get("/api/runs", params={"conversation": conversation})
        assert response.status_code == 200, response.text
        runs = list(reversed(response.json()))
        if len(runs) >= count and all(run["status"] in ENDED for run in runs):
            return runs
        await asyncio.sleep(0.05)
    raise AssertionError(f"runs of {conversation}: {[(run['status'], run['message'][:40]) for run in runs]}")


async def approval_in(stack: Stack, code: str, state: str, seconds: float = 60) -> dict:
    """The request once its answer is recorded as `state` (the workflow records it after the press)."""
    for _ in range(int(seconds * 20)):
        found = await approval(stack, code)
        if found["state"] == state:
            return found
        await asyncio.sleep(0.05)
    raise AssertionError(f"request {code}: {found}")


@workflow.defn(name="EnvironmentStandIn", sandboxed=False)
class EnvironmentStandIn:
    """Takes the place of an environment's workflow in the platforms' press tests: takes every answer,
    keeps it, and says it was taken in the words of `TAKEN`."""

    def __init__(self) -> None:
        self.decisions: list[Decision] = []

    @workflow.run
    async def run(self) -> None:
        await workflow.wait_condition(lambda: False)

    @workflow.update(name="answer_approval")
    async def answer_approval(self, decision: Decision) -> DecisionTaken:
        self.decisions.append(decision)
        return DecisionTaken(True, f"{TAKEN} by {decision.by}")

    @workflow.query
    def answers(self) -> list[Decision]:
        return self.decisions


TAKEN = "Answered"


@pytest.fixture
async def waiting_environment(temporal: Client) -> AsyncIterator[Callable[[str], Awaitable[WorkflowHandle]]]:
    """Starts the stand-in as the workflow of an environment id (terminated at the end)."""
    queue = f"stand-in-{uuid.uuid4().hex[:8]}"
    handles: list[WorkflowHandle] = []
    async with Worker(temporal, task_queue=queue, workflows=[EnvironmentStandIn]):
        async def start(environment_id: str) -> WorkflowHandle:
            handle = await temporal.start_workflow(EnvironmentStandIn.run, id=environment_workflow_id(environment_id),
                                                   task_queue=queue)
            handles.append(handle)
            return handle
        yield start
        for handle in handles:
            await handle.terminate()


async def answers_of(handle: WorkflowHandle, count: int = 1, seconds: float = 30) -> list[Decision]:
    """The stand-in's answers once it has `count`."""
    for _ in range(int(seconds * 20)):
        answers = await handle.query(EnvironmentStandIn.answers)
        if len(answers) >= count:
            return answers
        await asyncio.sleep(0.05)
    raise AssertionError(f"the stand-in took {answers}")


async def recorded_request(db: asyncpg.Pool, platform: str, conversation_id: str, code: str, *,
                           requested_by: str | None, kind: str = "tool", state: str = "pending",
                           answered_by: str | None = None) -> str:
    """A request a run made, as the run records it (with the codebase, environment and run it needs, and
    no workflow waiting for it), for the platforms' press tests; returns its environment's id."""
    codebase = await db.fetchval("INSERT INTO codebases (name, canonical_path, default_branch, host) "
                                 "VALUES ($1, $2, 'main', 'h') RETURNING id", f"app-{code}", f"/src/app-{code}")
    environment = await db.fetchval(
        "INSERT INTO isolation_environments (codebase_id, workflow_type, workflow_id, working_path, branch_name) "
        "VALUES ($1, 'thread', $2, $3, $4) RETURNING id",
        codebase, f"{platform}:{conversation_id}-{code}", f"/worktrees/app/{code}", f"thread-{code}")
    run = await db.fetchval("INSERT INTO agent_runs (id, environment_id, platform, conversation_id, message, status) "
                            "VALUES ($1, $2, $3, $4, 'push it', 'waiting') RETURNING id",
                            uuid.uuid4(), environment, platform, conversation_id)
    await db.execute(
        """INSERT INTO approvals (id, code, run_id, environment_id, platform, conversation_id, requested_by, kind,
                                  tool_name, summary, state, answered_by)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'Bash', 'git push', $9, $10)""",
        uuid.uuid4(), code, run, environment, platform, conversation_id, requested_by, kind, state, answered_by)
    return str(environment)


# The platforms' end-to-end tests (tests/workflows/approvals/).
TOOL_LABELS = ["Allow once", "Allow for this conversation", "Deny"]
SLACK_OTHER = "U0OTHER001"  # in the channel, but did not start the run
TELEGRAM_OTHER = {"id": 444555666, "username": "bob"}  # may talk to the bot, but did not start the run
DISCORD_OTHER = "1100000000000000700"  # a member with the `developers` role: allowed, but did not start the run
EPHEMERAL = 64  # Discord's flag of a message only its reader sees


def allow_once_script(claude: FakeAnthropicApi) -> None:
    """The call asked for, then the same call again once allowed (the resumed session), then the answer."""
    claude.then(run("git push origin HEAD"), run("git push origin HEAD"), text("Pushed."))


def ended_with_push(said: str) -> bool:
    """The run's answer in its final form: it streams first, then is replaced by what it did and its end."""
    return "Pushed." in said and "— Done" in said


async def allowed_push_answered(stack: Stack, claude: FakeAnthropicApi, conversation: str, approver: str,
                                texts: Callable[[], list[str]]) -> list[dict]:
    """After an Allow of allow_once_script's push: the waiting run and the one that went on with it
    ended, the model was told who approved, and the answer that says the push ran is in the
    conversation (`texts`). The two runs."""
    runs = await conversation_runs_when_ended(stack, conversation, 2)
    assert [item["status"] for item in runs] == ["waiting", "done"]
    assert f"{approver} approved this call" in claude.conversation_texts(len(claude.calls) - 2)
    await until(lambda: any(ended_with_push(said) for said in texts()), "the answer in the conversation")
    answer = [said for said in texts() if ended_with_push(said)][-1]
    assert "ran `git push origin HEAD` (exit" in answer, answer
    return runs


def deny_script(claude: FakeAnthropicApi) -> None:
    claude.then(run("touch denied.txt"), text("Understood, I left it."))
