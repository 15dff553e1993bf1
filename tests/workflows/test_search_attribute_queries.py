"""Every search attribute docs/operations.md names finds its workflows through the visibility API, and an
environment's IsolatorStatus follows it to `destroyed`."""

from __future__ import annotations

import uuid
from pathlib import Path

from tests.conftest import Stack
from tests.visibility import found


async def test_a_message_and_its_environment_are_found_by_every_search_attribute(stack: Stack, repo: Path) -> None:
    codebase = (await stack.register(repo))["name"]
    conversation = f"search-{uuid.uuid4().hex[:8]}"
    created = await stack.say(conversation, "work here")
    result = created["result"]
    message, environment = created["workflowId"], f"environment:{result['environmentId']}"

    for query in (
        f"IsolatorCodebase = '{codebase}'",
        "IsolatorPlatform = 'test'",
        f"IsolatorConversation = 'test:{conversation}'",
        f"IsolatorBranch = '{result['branch']}'",
        f"IsolatorOutcome = 'created' AND IsolatorConversation = 'test:{conversation}'",
    ):
        assert await found(stack.temporal, query, message), query
    for query in (
        f"IsolatorCodebase = '{codebase}'",
        f"IsolatorBranch = '{result['branch']}'",
        f"IsolatorWorkflowType = 'thread' AND IsolatorWorkflowId = 'test:{conversation}'",
        f"IsolatorStatus = 'active' AND IsolatorWorkflowId = 'test:{conversation}'",
    ):
        assert await found(stack.temporal, query, environment), query

    await stack.say(conversation, "/worktree remove")
    assert await found(stack.temporal, f"IsolatorStatus = 'destroyed' AND IsolatorWorkflowId = 'test:{conversation}'",
                       environment)
    assert not await found(stack.temporal, f"IsolatorStatus = 'active' AND IsolatorWorkflowId = 'test:{conversation}'",
                           environment, seconds=1)
