"""A checkout slower than the workflow task timeout. On the codebase's own host the worktree is made
by a local activity inside the message's workflow task (workflows/steps.py), which the SDK keeps
alive meanwhile: the message still ends once, with one worktree and one reply (and, no agent being configured, the notice saying so)."""

from __future__ import annotations

import json
from pathlib import Path

from temporalio.api.enums.v1 import EventType

from tests.conftest import Stack
from tests.gitrepos import first_replies, git, worktree_paths
from workflows.naming import thread_branch

WORKFLOW_TASK_TIMEOUT_SECONDS = 10  # the server's default, which the service keeps


async def test_a_checkout_slower_than_the_workflow_task_timeout_completes_once(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    # A smudge filter of the repository's own configuration (the operator's; a hook no longer runs in
    # the service's git): `git worktree add` runs it on checking out the file.
    git("config", "filter.slow.smudge", f"sleep {WORKFLOW_TASK_TIMEOUT_SECONDS + 2}; cat", cwd=repo)
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text("file0.txt filter=slow\n")

    answer = await stack.say("slow")

    branch = thread_branch("test:slow")
    assert answer["result"]["outcome"] == "created", answer
    assert worktree_paths(repo) == [answer["result"]["workingPath"]]
    assert await stack.replies("slow") == first_replies(branch, repo)
    history = await stack.temporal.get_workflow_handle(answer["workflowId"]).fetch_history()
    kinds = [event.event_type for event in history.events]
    assert kinds.count(EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED) > 1, "the SDK heartbeat the workflow task"
    assert EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT not in kinds
    assert EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED not in kinds
    creations = [
        json.loads(event.marker_recorded_event_attributes.details["data"].payloads[0].data)
        for event in history.events
        if event.marker_recorded_event_attributes.marker_name == "core_local_activity"
    ]
    assert [(marker["activity_type"], marker["attempt"]) for marker in creations
            if marker["activity_type"] == "create_worktree_here"] == [("create_worktree_here", 1)]
