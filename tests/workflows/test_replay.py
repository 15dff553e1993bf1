"""Replay: histories of real runs, kept in tests/histories/, replayed with the current workflow code.

A workflow change that would break the runs already in flight in production (a new activity before
an old one, a removed timer, another child workflow) fails here, without a Temporal server.

The histories are captured from real runs (real git, PostgreSQL and Temporal) by the capture test:

    ISOLATOR_CAPTURE_HISTORIES=1 .venv/bin/python -m pytest -q tests/workflows/test_replay.py

Capture anew only when a change is meant to be incompatible (and the running workflows have been
dealt with, e.g. by a patch() or by letting them finish first), or to cover a new path.
"""

from __future__ import annotations

import asyncio
import base64
import json
import socket
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from temporalio import workflow
from temporalio.client import Client, ScheduleHandle, WorkflowHistory
from temporalio.worker import Replayer
from temporalio.worker.workflow_sandbox import (
    SandboxedWorkflowRunner,
    SandboxRestrictions,
)

from api.dispatch import dispatch_message
from isolator.contracts.environment import EnvironmentState, MarkDestroyedInput
from isolator.contracts.message import MessageInput
from isolator.contracts.worktree import RemovalReport
from isolator.payloads import DATA_CONVERTER
from tests.agent_runs import finished_run
from tests.conftest import Stack
from tests.gitrepos import git, worktree_paths
from tests.removals import close_unreadable
from tests.replay_workflows.clock_reading import ClockReadingMessageWorkflow
from tests.schedules import commit_in, trigger_sweep
from tests.workflows.test_warm_pool import pool_settles
from workers.schedule import ensure_cleanup_schedule
from workers.worker import WORKFLOWS
from workflows import environment_removal
from workflows.environment import EnvironmentWorkflow
from workflows.environment_removal import Removals
from workflows.message import MessageWorkflow
from workflows.steps.environments import records as environments, isolation

HISTORIES = Path(__file__).resolve().parents[1] / "histories"
# file name -> what it holds
CAPTURED = {
    "message_created": "MessageWorkflow: a first message creates a worktree and replies",
    "message_closed": "MessageWorkflow: the platform closes the conversation",
    "environment_closed": "EnvironmentWorkflow: attached, then closed: removes its worktree and completes",
    "environment_destroyed_by_cleanup": "EnvironmentWorkflow: removed by the cleanup's destroy_and_report update",
    "cleanup": "CleanupWorkflow: started by the schedule, one child per codebase",
    "codebase_cleanup": "CodebaseCleanupWorkflow: survey, plan, destroy the merged environment",
    "message_handed_to_agent": "MessageWorkflow: a message reuses its worktree and is queued behind a running run",
    "environment_with_agent_runs": "EnvironmentWorkflow: two agent runs one after the other, then closed",
    "agent_run_record": "AgentRunWorkflow: the record of a run, told its end",
    "message_restore_command": "MessageWorkflow: `/worktree restore` runs a child RestoreEnvironmentWorkflow",
    "restore_environment": "RestoreEnvironmentWorkflow: a removed worktree back from its archive, a new environment",
    "message_returned": "MessageWorkflow: a message after the close returns to the archived worktree",
    "codebase_cleanup_budget": "CodebaseCleanupWorkflow: over the disk budget, an idle environment hibernates",
    "environment_hibernated": "EnvironmentWorkflow: restored, hibernated, woken by a message, then closed",
    "message_claimed_warm": "MessageWorkflow: a first message claims a warm worktree and replies",
    "warm_pool": "WarmPoolWorkflow: fills the pool, refills it after a claim, empties it when set to 0 and ends",
    "message_reused": "MessageWorkflow: a follow-up reuses its worktree, checked as its conversation was recorded",
    "environment_removal_retried": "EnvironmentWorkflow: closed, its removal refused (git cannot read it), "
                                   "tried again, then gone through and said",
    "environment_refused_by_a_person": "EnvironmentWorkflow: `/worktree remove` refused (uncommitted changes), "
                                       "then forced",
    # captured by tests/workflows/github/test_replay_pr_loop.py, with the fake GitHub
    "pr_loop_red_ci": "PullRequestLoopWorkflow: red CI on a head the service pushed, one fix run queued",
    "pr_loop_review": "PullRequestLoopWorkflow: a review, its run waited for, a reply in its thread",
    # captured by tests/workflows/github/test_replay_pr_commands.py, with the fake GitHub
    "message_command_on_pr": "MessageWorkflow: `/fix-ci` as a PR's first comment shares its issue's worktree",
    "pr_loop_fix_ci": "PullRequestLoopWorkflow: `/fix-ci`, the head's state and failure read at once, a run queued",
    "pr_loop_green_said_on_pr": "PullRequestLoopWorkflow: the fixed head green, said in the issue and on the PR",
}
# Kept from runs of older workflow code, never captured again: they replay through its `patched()` branches.
KEPT = {
    "message_created_before_create_path_v2": "MessageWorkflow before adoption ran locally and the limit was "
                                             "counted (versions.CREATE_PATH_V2)",
    "message_created_before_local_steps": "MessageWorkflow before the worktree was created and the replies sent "
                                          "as local activities (versions.LOCAL_STEPS)",
    "message_created_before_agent_runs": "MessageWorkflow before messages were handed to the coding agent "
                                         "(versions.AGENT_RUNS)",
    "message_created_before_archives": "MessageWorkflow before a message returned to an archived worktree "
                                       "(versions.RETURNS_TO_ARCHIVES)",
    "environment_closed_before_archives": "EnvironmentWorkflow before removals were archived and could hibernate",
    "cleanup_before_archives": "CleanupWorkflow before the archives' retention and the disk budget",
    "codebase_cleanup_before_archives": "CodebaseCleanupWorkflow before the archives' retention and the disk budget",
    "environment_removal_retried_before_only_the_service_retries":
        "EnvironmentWorkflow: a close's refused removal retried as `retry`, before only the service's own "
        "were (environment_removal.ONLY_THE_SERVICE_RETRIES)",
    "environment_refused_by_a_person_before_only_the_service_retries":
        "EnvironmentWorkflow: `/worktree remove` refused and retried every hour until it went, before only the "
        "service's own were (environment_removal.ONLY_THE_SERVICE_RETRIES)",
}
# Stands in for the test's temporary folder in the stored histories: no path of the capturing machine.
PLACEHOLDER_ROOT = "/replay"
IDENTITY = "replay-capture"
STICKY_QUEUE = "replay-capture-sticky"
# Workers run workflows unsandboxed for speed (workers/worker.py); replays run them in the SDK's
# default sandbox, so that a workflow reaching for the clock, randomness or I/O is refused here.
# Only the shared types are passed through, as the SDK advises for data classes: a result's type
# must be found by its module's name when the payload is decoded inside the sandbox.
STRICT_SANDBOX = SandboxedWorkflowRunner(
    restrictions=SandboxRestrictions.default.with_passthrough_modules("isolator.contracts")
)


# --- capture ---------------------------------------------------------------------------------------


async def fetch(client: Client, workflow_id: str, run_id: str | None = None) -> WorkflowHistory:
    return await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()


def scrubbed(history: WorkflowHistory, root: Path) -> dict[str, Any]:
    """The history as JSON, the capturing machine's paths and worker identities replaced."""
    local = str(root)

    def text(value: str) -> str:
        return value.replace(local, PLACEHOLDER_ROOT)

    def walk(node: Any, key: str = "") -> Any:
        if isinstance(node, dict):
            if _is_json_payload(node):
                data = base64.b64decode(node["data"]).decode()
                return {**node, "data": base64.b64encode(text(data).encode()).decode()}
            if node.get("kind") == "TASK_QUEUE_KIND_STICKY":  # named after the worker's pid and host
                return {**node, "name": STICKY_QUEUE}
            return {name: walk(value, name) for name, value in node.items()}
        if isinstance(node, list):
            return [walk(item) for item in node]
        if isinstance(node, str):
            return IDENTITY if key == "identity" else text(node)
        return node

    cleaned = walk(history.to_json_dict())
    rendered = json.dumps(cleaned)
    decoded = " ".join(_payload_texts(cleaned))
    project = str(Path(__file__).resolve().parents[2])
    for leak in {local, project, str(Path.home()), f"@{socket.gethostname()}", "stackTrace"}:
        assert leak not in rendered and leak not in decoded, f"{leak!r} is left in a captured history"
    return cleaned


def _is_json_payload(node: dict[str, Any]) -> bool:
    encoding = node.get("metadata", {}).get("encoding", "")
    return "data" in node and base64.b64decode(encoding) == b"json/plain"


def _payload_texts(node: Any) -> list[str]:
    if isinstance(node, dict):
        if _is_json_payload(node):
            return [base64.b64decode(node["data"]).decode()]
        return [text for value in node.values() for text in _payload_texts(value)]
    if isinstance(node, list):
        return [text for item in node for text in _payload_texts(item)]
    return []


def store(name: str, history: WorkflowHistory, root: Path) -> None:
    HISTORIES.mkdir(exist_ok=True)
    document = {"workflowId": history.workflow_id, "about": CAPTURED[name], "history": scrubbed(history, root)}
    (HISTORIES / f"{name}.json").write_text(json.dumps(document, indent=1) + "\n")


@pytest.mark.capture
async def test_capture_histories(stack: Stack, repo: Path, schedule: ScheduleHandle) -> None:  # noqa: F811
    """Runs every captured path for real and stores its history; defined first, so it runs before the replays."""
    client, root = stack.temporal, stack.tmp_path
    await stack.register(repo)

    # a message creates a worktree; the platform then closes the conversation
    created = await stack.say("replay-closed", "fix the login bug")
    assert created["result"]["outcome"] == "created"
    environment_id = created["result"]["environmentId"]
    closing = await dispatch_message(client, stack.settings.task_queue, MessageInput(
        platform="test", conversation_id="replay-closed", text="", message_key=uuid.uuid4().hex,
        default_host=stack.settings.host, kind="closed",
    ))
    assert (await closing.result()).outcome == "closed"
    environment = client.get_workflow_handle_for(EnvironmentWorkflow.run, f"environment:{environment_id}")
    assert (await environment.result()).outcome == "removed"
    assert worktree_paths(repo) == []

    # a merged branch, its conversation gone quiet: the scheduled cleanup removes it
    merged = (await stack.say("replay-merged", "add a feature"))["result"]
    commit_in(Path(merged["workingPath"]), "feature.txt", "the feature\n")
    git("merge", "-q", "--no-ff", "-m", "merge", merged["branch"], cwd=repo)
    await stack.db.execute(
        """UPDATE conversations SET last_activity_at = now() - make_interval(days => $1)
           WHERE platform_conversation_id = 'replay-merged'""",
        stack.settings.stale_threshold_days + 1,
    )
    await ensure_cleanup_schedule(client, stack.settings)
    sweep = await trigger_sweep(client, schedule)
    (report,) = (await sweep.result()).codebases
    assert report.removed == [f"{merged['branch']} (merged)"]
    assert worktree_paths(repo) == []
    destroyed = client.get_workflow_handle_for(EnvironmentWorkflow.run, f"environment:{merged['environmentId']}")
    assert (await destroyed.query(EnvironmentWorkflow.state)).status == "destroyed"
    children = [event.child_workflow_execution_started_event_attributes.workflow_execution
                for event in (await sweep.fetch_history()).events
                if event.HasField("child_workflow_execution_started_event_attributes")]
    assert len(children) == 1

    # the coding agent: a run, a second message queued behind it, then the conversation closed
    # (a shell line: a path of the capturing machine must not be in the history)
    stack.settings.agent_command_line = """sh -c 'read -r task; sleep 1.5; echo "finished $task"'"""
    first = (await stack.say("replay-agent", "first task"))["result"]
    queued = await stack.say("replay-agent", "second task")
    assert queued["result"]["replies"][0].startswith("Queued: ")
    await finished_run(stack, queued["result"]["agentRunId"])
    agent_closing = await dispatch_message(client, stack.settings.task_queue, MessageInput(
        platform="test", conversation_id="replay-agent", text="", message_key=uuid.uuid4().hex,
        default_host=stack.settings.host, kind="closed",
    ))
    await agent_closing.result()
    with_runs = client.get_workflow_handle_for(EnvironmentWorkflow.run, f"environment:{first['environmentId']}")
    assert (await with_runs.result()).outcome == "removed"
    record = client.get_workflow_handle(f"agent-run:{first['agentRunId']}")
    assert (await record.result())["status"] == "done"

    # every removal is archived: `/worktree restore` brings the closed worktree back...
    branch = created["result"]["branch"]
    restored = await stack.say("replay-closed", f"/worktree restore {branch}")
    assert restored["result"]["replies"][0].startswith(f"Restored `{branch}`"), restored
    restore_child = client.get_workflow_handle(f"{restored['workflowId']}:restore")
    first_restored = (await restore_child.result())["environment_id"]
    # ...a message after the next close returns to it...
    closed_again = await dispatch_message(client, stack.settings.task_queue, MessageInput(
        platform="test", conversation_id="replay-closed", text="", message_key=uuid.uuid4().hex,
        default_host=stack.settings.host, kind="closed",
    ))
    await closed_again.result()
    assert (await client.get_workflow_handle(f"environment:{first_restored}").result())["outcome"] == "removed"
    stack.settings.agent_command_line = None
    returned = await stack.say("replay-closed", "where were we?")
    assert returned["result"]["outcome"] == "restored", returned
    # ...the disk budget hibernates it, and the next message wakes it; then it is closed
    stack.settings.disk_budget_gb = 1e-6
    budget_sweep = await trigger_sweep(client, schedule)
    (budget_report,) = (await budget_sweep.result()).codebases
    assert budget_report.hibernated and budget_report.hibernated[0].startswith(branch), budget_report
    stack.settings.disk_budget_gb = None
    woken = await stack.say("replay-closed", "wake up")
    assert woken["result"]["replies"][0].startswith(f"Restored `{branch}`"), woken
    hibernated = client.get_workflow_handle_for(
        EnvironmentWorkflow.run, f"environment:{returned['result']['environmentId']}")
    last_close = await dispatch_message(client, stack.settings.task_queue, MessageInput(
        platform="test", conversation_id="replay-closed", text="", message_key=uuid.uuid4().hex,
        default_host=stack.settings.host, kind="closed",
    ))
    await last_close.result()
    assert (await hibernated.result()).outcome == "removed"
    budget_children = [event.child_workflow_execution_started_event_attributes.workflow_execution
                       for event in (await budget_sweep.fetch_history()).events
                       if event.HasField("child_workflow_execution_started_event_attributes")]

    store("message_restore_command", await fetch(client, restored["workflowId"], restored["runId"]), root)
    store("restore_environment", await restore_child.fetch_history(), root)
    store("message_returned", await fetch(client, returned["workflowId"], returned["runId"]), root)
    store("codebase_cleanup_budget",
          await fetch(client, budget_children[0].workflow_id, budget_children[0].run_id), root)
    store("environment_hibernated", await hibernated.fetch_history(), root)
    store("message_created", await fetch(client, created["workflowId"], created["runId"]), root)
    store("message_handed_to_agent", await fetch(client, queued["workflowId"], queued["runId"]), root)
    store("environment_with_agent_runs", await with_runs.fetch_history(), root)
    store("agent_run_record", await record.fetch_history(), root)
    store("message_closed", await fetch(client, closing.id, closing.result_run_id), root)
    store("environment_closed", await environment.fetch_history(), root)
    store("environment_destroyed_by_cleanup", await destroyed.fetch_history(), root)
    store("cleanup", await sweep.fetch_history(), root)
    store("codebase_cleanup", await fetch(client, children[0].workflow_id, children[0].run_id), root)


@pytest.mark.capture
async def test_capture_warm_pool_and_reuse_histories(stack: Stack, repo: Path) -> None:
    """The warm pool's paths (docs/warm.md), and a follow-up; `-k warm` captures these alone."""
    client, root = stack.temporal, stack.tmp_path
    stack.settings.warm_worktrees = 1  # off in the other tests
    codebase = (await stack.register(repo))["id"]
    [warm] = await pool_settles(stack, codebase, ready=1)

    claimed = await stack.say("replay-warm", "start from a warm worktree")
    assert claimed["result"]["outcome"] == "created"
    made_as = (Path(claimed["result"]["workingPath"]) / ".git").read_text().strip().rsplit("/", 1)[1]
    assert made_as == Path(warm["path"]).name, "it claimed the warm worktree"
    reused = await stack.say("replay-warm", "and a follow-up")
    assert reused["result"]["outcome"] == "reused"
    await pool_settles(stack, codebase, ready=1)  # refilled
    pool = client.get_workflow_handle(f"warm-pool:{codebase}")
    (await stack.api.patch(f"/api/codebases/{codebase}", json={"warm_worktrees": 0})).raise_for_status()
    await pool.result()  # emptied, then ended

    store("message_claimed_warm", await fetch(client, claimed["workflowId"], claimed["runId"]), root)
    store("warm_pool", await pool.fetch_history(), root)
    store("message_reused", await fetch(client, reused["workflowId"], reused["runId"]), root)


@pytest.mark.capture
async def test_capture_refused_removal_histories(stack: Stack, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A refused removal: the service's own, tried again and gone through; a person's, ended, then
    forced. `-k refused` captures these alone."""
    client, root = stack.temporal, stack.tmp_path
    monkeypatch.setattr(environment_removal, "RETRY_REFUSED_REMOVAL", timedelta(seconds=1))
    await stack.register(repo)

    closed = (await stack.say("replay-refused", "hello"))["result"]
    pointer = await close_unreadable(stack, "replay-refused", closed)
    await asyncio.sleep(1.5)  # a retry, refused again
    Path(closed["workingPath"], ".git").write_text(pointer)
    retried = client.get_workflow_handle_for(EnvironmentWorkflow.run, f"environment:{closed['environmentId']}")
    assert (await retried.result()).outcome == "removed"

    person = (await stack.say("replay-person", "/worktree create kept"))["result"]
    kept = Path(await stack.db.fetchval("SELECT working_path FROM isolation_environments "
                                        "WHERE branch_name = 'task-kept'"))
    (kept / "notes.txt").write_text("unsaved\n")
    assert "not removed" in (await stack.say("replay-person", "/worktree remove"))["result"]["replies"][0]
    assert (await stack.say("replay-person", "/worktree remove --force"))["result"]["replies"][0].startswith("Removed")
    environment_id = await stack.db.fetchval("SELECT id FROM isolation_environments WHERE branch_name = 'task-kept'")
    forced = client.get_workflow_handle_for(EnvironmentWorkflow.run, f"environment:{environment_id}")
    assert person["outcome"] == "command" and (await forced.result()).outcome == "removed"

    store("environment_removal_retried", await retried.fetch_history(), root)
    store("environment_refused_by_a_person", await forced.fetch_history(), root)


# --- replay ----------------------------------------------------------------------------------------


def load(name: str) -> WorkflowHistory:
    path = HISTORIES / f"{name}.json"
    if not path.exists():
        pytest.fail(f"{path.name} is missing; capture it with ISOLATOR_CAPTURE_HISTORIES=1 (see this module)")
    stored = json.loads(path.read_text())
    return WorkflowHistory.from_json(stored["workflowId"], stored["history"])


@pytest.mark.parametrize("name", [*CAPTURED, *KEPT])
async def test_a_captured_history_replays_with_the_current_workflow_code(name: str) -> None:
    history = load(name)
    assert len(history.events) > 5, "a real run, not an empty shell"
    result = await Replayer(workflows=WORKFLOWS, workflow_runner=STRICT_SANDBOX,
                            data_converter=DATA_CONVERTER).replay_workflow(history)
    assert result.replay_failure is None


async def test_a_workflow_that_reads_the_clock_fails_the_replay() -> None:
    """The strict sandbox is the determinism guard: the production worker runs without it."""
    history = load("message_created")
    others = [workflow_class for workflow_class in WORKFLOWS if workflow_class is not MessageWorkflow]
    result = await Replayer(workflows=[*others, ClockReadingMessageWorkflow],
                            workflow_runner=STRICT_SANDBOX).replay_workflow(history, raise_on_replay_failure=False)
    assert "Cannot access time.time" in str(result.replay_failure)


class SwappedRemovals(Removals):
    """The removal's two steps in the other order: not deterministic."""

    async def remove(self) -> RemovalReport:
        environment = self.state.environment
        await environments.mark_environment_destroyed(MarkDestroyedInput(environment.environment_id, "closed"))
        self.state.status = "destroyed"
        return await isolation.remove_worktree(environment, False)


# Not sandboxed: the sandbox would import this test module, and the test stack with it, inside itself.
@workflow.defn(name="EnvironmentWorkflow", sandboxed=False)
class SwappedEnvironmentWorkflow(EnvironmentWorkflow):
    """EnvironmentWorkflow with SwappedRemovals."""

    @workflow.init
    def __init__(self, state: EnvironmentState) -> None:
        super().__init__(state)
        self._removals = SwappedRemovals(state, self._runs)

    @workflow.run
    async def run(self, state: EnvironmentState) -> RemovalReport:
        return await super().run(state)


async def test_a_change_in_the_order_of_activities_fails_the_replay() -> None:
    """The check above can fail: the same history with the steps swapped is refused."""
    history = load("environment_closed")
    swapped = [workflow_class for workflow_class in WORKFLOWS if workflow_class is not EnvironmentWorkflow]
    with pytest.raises(workflow.NondeterminismError):
        await Replayer(workflows=[*swapped, SwappedEnvironmentWorkflow]).replay_workflow(history)
