"""A follow-up message takes as few rounds of its workflow as it can: the worktree is checked by the
local activity that records the conversation, not by one of its own (docs/warm.md, "Where a reuse's
time goes"). Real git, PostgreSQL and Temporal."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.conftest import Stack


async def local_activities(stack: Stack, answer: dict) -> list[str]:
    history = await stack.temporal.get_workflow_handle(answer["workflowId"], run_id=answer["runId"]).fetch_history()
    names = []
    for event in history.events:
        if event.HasField("marker_recorded_event_attributes"):
            for payloads in event.marker_recorded_event_attributes.details.values():
                for payload in payloads.payloads:
                    if payload.metadata.get("encoding") != b"json/plain":
                        continue
                    data = json.loads(payload.data)
                    if isinstance(data, dict) and "activity_type" in data:
                        names.append(data["activity_type"])
    return names


async def test_a_follow_up_checks_its_worktree_with_the_conversations_record(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    first = await stack.say("rounds-1")

    reused = await stack.say("rounds-1")

    assert reused["result"]["outcome"] == "reused"
    steps = await local_activities(stack, reused)
    assert steps[0] == "record_conversation" and "validate_environment" not in steps, steps
    # A worktree gone behind our back is still seen as gone, by the same check.
    shutil.rmtree(first["result"]["workingPath"])
    again = await stack.say("rounds-1")
    assert again["result"]["outcome"] == "created"
    assert "no longer exists" in (await stack.replies("rounds-1"))[-2]
    # A codebase on another host is checked there, as before: tests/workers/test_eager_start.py.

