"""A worker SIGKILLed at every activity of the create path and of the removal path, not at a list
kept by hand: a reference run's workflow histories name the activities (local ones included), so a
new activity is covered by itself. At each, the worker stops just after the activity did its work
(its completion not yet reported), is killed and started again; then the message ends once, with
one worktree, one row and one reply, and a removal happens once and whole.

The points run side by side, each with its own worker process, task queues and repository."""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import AsyncIterator

import asyncpg
import httpx
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHistory

from api.app import create_app
from isolator.settings import Settings
from tests.faults.conftest import WorkerProcess, register, wait_for
from tests.gitrepos import make_repo, worktree_paths
from workflows.chat.agent_texts import no_agent
from workflows.environment import EnvironmentWorkflow
from workflows.message import MessageWorkflow

ROUNDS = int(os.environ.get("ISOLATOR_SOAK_ROUNDS", "1"))


def activities_in(history: WorkflowHistory, after_event: int = 0) -> list[str]:
    """The activity types a history ran, in order, once each: scheduled ones and local ones (markers)."""
    found: list[str] = []
    for event in history.events:
        if event.event_id <= after_event:
            continue
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            name = event.activity_task_scheduled_event_attributes.activity_type.name
        elif event.event_type == EventType.EVENT_TYPE_MARKER_RECORDED \
                and event.marker_recorded_event_attributes.marker_name == "core_local_activity":
            data = event.marker_recorded_event_attributes.details["data"].payloads[0].data
            name = json.loads(data)["activity_type"]
        else:
            continue
        if name not in found:
            found.append(name)
    return found


def update_accepted(history: WorkflowHistory) -> int:
    """The event at which the environment was asked to remove itself."""
    return next(event.event_id for event in history.events
                if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED)


@dataclass
class Point:
    """One activity to kill the worker at, with a stack of its own."""

    activity: str
    settings: Settings
    worker: WorkerProcess
    repo: Path
    api: httpx.AsyncClient

    @classmethod
    def make(cls, activity: str, settings: Settings, temporal: Client, db: asyncpg.Pool, root: Path) -> "Point":
        run = uuid.uuid4().hex[:8]
        own = settings.model_copy(update={"task_queue": f"kill-{run}", "host": f"host-{run}",
                                          "worktree_base_setting": root / run / "worktrees"})
        logs = root / run / "logs"
        logs.mkdir(parents=True)
        transport = httpx.ASGITransport(app=create_app(own, temporal=temporal, pool=db))
        api = httpx.AsyncClient(transport=transport, base_url="http://isolator.test", timeout=180)
        return cls(activity, own, WorkerProcess(own, logs), make_repo(root / run / "repos" / f"at-{run}"), api)

    async def say(self, conversation: str, text: str, wait: bool = True) -> dict:
        response = await self.api.post("/test/message", params={"wait": str(wait).lower()},
                                       json={"conversationId": conversation, "message": text})
        assert response.status_code == 200, response.text
        return response.json()

    @asynccontextmanager
    async def running(self) -> AsyncIterator["Point"]:
        """Its worker started and its repository registered for the block; stopped afterwards, whatever happened."""
        try:
            self.worker.start()
            await register(self.api, self.repo)
            yield self
        finally:
            self.worker.stop()
            await self.api.aclose()

    async def killed_there(self, conversation: str, text: str) -> str:
        """Send the message with the worker paused at the activity; kill it there, start it again.
        The message workflow's id."""
        marker = self.worker.logs / f"paused-{uuid.uuid4().hex[:6]}"
        self.worker.stop()
        self.worker.start(ISOLATOR_FAULT_PAUSE=f"{self.activity}:after", ISOLATOR_FAULT_MARKER=str(marker))
        sent = await self.say(conversation, text, wait=False)
        await wait_for(marker, self.worker, seconds=90)
        self.worker.kill()
        self.worker.start()
        return sent["workflowId"]

    async def replies(self, db: asyncpg.Pool, conversation: str) -> list[str]:
        rows = await db.fetch("SELECT body FROM outbound_messages WHERE platform_conversation_id = $1 AND "
                              "status = 'sent' ORDER BY id", conversation)
        return [row["body"] for row in rows]


async def pending_activities(temporal: Client, *workflow_ids: str) -> list[tuple[str, str, int]]:
    """What the workflows wait for: (workflow, activity, attempt), to say why one did not end."""
    found = []
    for workflow_id in workflow_ids:
        description = await temporal.get_workflow_handle(workflow_id).describe()
        found += [(workflow_id, pending.activity_type.name, pending.attempt)
                  for pending in description.raw_description.pending_activities]
    return found


async def reference(settings: Settings, temporal: Client, db: asyncpg.Pool, root: Path) -> tuple[list[str], list[str]]:
    """A create and a `/worktree remove` without faults: the activities of each path."""
    point = Point.make("none", settings, temporal, db, root)
    point.worker.start()
    try:
        await register(point.api, point.repo)
        await point.say("reference", f"/clone {point.repo}")  # its own codebase: others run beside it
        created = await point.say("reference", "go")
        removed = await point.say("reference", "/worktree remove")
        environment = temporal.get_workflow_handle_for(
            EnvironmentWorkflow.run, f"environment:{created['result']['environmentId']}")
        await environment.result()
        create_path = activities_in(await temporal.get_workflow_handle(created["workflowId"]).fetch_history())
        environment_history = await environment.fetch_history()
        removal_path = activities_in(await temporal.get_workflow_handle(removed["workflowId"]).fetch_history())
        removal_path += [name for name in activities_in(environment_history, update_accepted(environment_history))
                         if name not in removal_path]
    finally:
        point.worker.stop()
        await point.api.aclose()
    return create_path, removal_path


async def test_a_worker_killed_at_any_activity_of_the_create_path_leaves_one_of_each(
    settings: Settings, temporal: Client, db: asyncpg.Pool, tmp_path: Path
) -> None:
    create_path, _ = await reference(settings, temporal, db, tmp_path)
    assert {"record_conversation", "create_worktree_here", "record_environment", "send_reply"} <= set(create_path)

    async def kill_at(activity: str) -> None:
        async with Point.make(activity, settings, temporal, db, tmp_path).running() as point:
            for round_number in range(ROUNDS):
                conversation = f"killed-at-{activity}-{round_number}-{point.settings.host}"
                await point.say(conversation, f"/clone {point.repo}")
                workflow_id = await point.killed_there(conversation, "go")
                result = await asyncio.wait_for(
                    temporal.get_workflow_handle_for(MessageWorkflow.run, workflow_id).result(), 120)
                assert result.outcome == "created", (activity, result, point.worker.log_text()[-2000:])
                assert result.working_path in worktree_paths(point.repo)
                rows = await db.fetchval("SELECT count(*) FROM isolation_environments e JOIN conversations c ON "
                                         "c.environment_id = e.id WHERE c.platform_conversation_id = $1", conversation)
                assert rows == 1, activity
                # /clone's, the creation's, and (no agent being configured) the notice: each once.
                # (The creation's line as delivered: its text is the first attempt's, which a creation run
                # again after the kill may word otherwise, hence `startswith`.)
                replies = await point.replies(db, conversation)
                assert len(replies) == 3, (activity, replies)
                assert replies[1].startswith(f"Working in isolated branch `{result.branch}`"), (activity, replies)
                assert replies[2] == no_agent() == result.replies[-1], (activity, replies, result)
            assert len(worktree_paths(point.repo)) == ROUNDS, f"{activity}: no worktree half-made"

    await asyncio.gather(*(kill_at(activity) for activity in create_path))


async def test_a_worker_killed_at_any_activity_of_the_removal_path_removes_once_and_whole(
    settings: Settings, temporal: Client, db: asyncpg.Pool, tmp_path: Path
) -> None:
    _, removal_path = await reference(settings, temporal, db, tmp_path)
    assert {"destroy_environment", "remove_worktree", "mark_environment_destroyed"} <= set(removal_path)

    async def kill_at(activity: str) -> None:
        async with Point.make(activity, settings, temporal, db, tmp_path).running() as point:
            for round_number in range(ROUNDS):
                conversation = f"removed-at-{activity}-{round_number}-{point.settings.host}"
                await point.say(conversation, f"/clone {point.repo}")
                created = (await point.say(conversation, "go"))["result"]
                workflow_id = await point.killed_there(conversation, "/worktree remove")
                try:
                    command = await asyncio.wait_for(
                        temporal.get_workflow_handle_for(MessageWorkflow.run, workflow_id).result(), 120)
                except TimeoutError:
                    waiting = await pending_activities(temporal, workflow_id, f"environment:{created['environmentId']}")
                    raise AssertionError(f"{activity}: the command did not end; waiting: {waiting}") from None
                assert command.outcome == "command", (activity, command)
                environment = temporal.get_workflow_handle_for(
                    EnvironmentWorkflow.run, f"environment:{created['environmentId']}")
                try:
                    report = await asyncio.wait_for(environment.result(), 120)
                except TimeoutError:
                    waiting = await pending_activities(temporal, f"environment:{created['environmentId']}")
                    raise AssertionError(f"{activity}: the environment did not end; waiting: {waiting}") from None
                assert report.outcome == "removed", (activity, report, point.worker.log_text()[-2000:])
                assert not Path(created["workingPath"]).exists() and worktree_paths(point.repo) == []
                status = await db.fetchval("SELECT status FROM isolation_environments WHERE id = $1::uuid",
                                           created["environmentId"])
                assert status == "destroyed", activity
                # /clone's, the creation's, the no-agent notice said with it, and the removal's: each once.
                replies = await point.replies(db, conversation)
                assert created["replies"][1:] == [no_agent()], (activity, created)
                assert len(replies) == 4 and replies[1:3] == created["replies"], (activity, replies)
                assert "removed" in replies[3].lower(), (activity, replies)

    await asyncio.gather(*(kill_at(activity) for activity in removal_path))
