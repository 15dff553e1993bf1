"""AGENT_WORKFLOW: a team's agent that runs as a Temporal worker of its own is started as a child of
each run, on AGENT_TASK_QUEUE, with a JSON input; its result is the answer."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import AsyncIterator

import pytest
from temporalio.client import Client
from temporalio.exceptions import ApplicationError
from temporalio.worker import Worker

from isolator.settings import Settings
from tests.agent_runs import finished_run, replies_when
from tests.agents.team_workflow import TeamAgent, write_team_note
from tests.conftest import Stack

TEAM_QUEUE = f"team-agents-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"agent_workflow": "TeamAgent", "agent_workflow_task_queue": TEAM_QUEUE})


@pytest.fixture
async def team_worker(temporal: Client) -> AsyncIterator[None]:
    worker = Worker(temporal, task_queue=TEAM_QUEUE, workflows=[TeamAgent], activities=[write_team_note],
                    workflow_failure_exception_types=[RuntimeError, ApplicationError])
    async with worker:
        yield


async def test_the_team_workflow_answers_and_its_changes_are_reported(
    stack: Stack, repo: Path, team_worker: None
) -> None:
    await stack.register(repo)
    created = (await stack.say("team-1", "write a note"))["result"]
    run = await finished_run(stack, created["agentRunId"])
    assert run["status"] == "done" and run["changed_files"] == ["TEAM_NOTE.md"]
    assert (Path(created["workingPath"]) / "TEAM_NOTE.md").read_text() == "write a note\n"
    replies = await replies_when(stack, "team-1", lambda texts: len(texts) == 2)
    assert replies[1].startswith(f"team agent on `{created['branch']}` for test (input: branch,conversation,"
                                 "environment_id,message,platform,run_id,working_path)")
    assert "1 file changed (`TEAM_NOTE.md`)" in replies[1]

    failed = (await stack.say("team-1", "please fail"))["result"]
    assert (await finished_run(stack, failed["agentRunId"]))["status"] == "failed"
    # The first run's record may end a moment before its environment lets it go: a "Queued" reply may
    # come between (seen once in a loaded suite), so the failure is looked for as the last reply.
    replies = await replies_when(stack, "team-1", lambda texts: "`TeamAgent` failed" in texts[-1])
    assert "Failed after" in replies[-1]
