"""Every search attribute the README names finds its workflows through the visibility API, and an
environment's IsolatorStatus follows it to `destroyed`."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from temporalio.client import Client

from tests.conftest import Stack


async def found(client: Client, query: str, workflow_id: str, seconds: float = 20) -> bool:
    """Whether `query` lists the workflow; visibility trails the history by a moment."""
    for _ in range(int(seconds * 10)):
        if any([execution.id async for execution in client.list_workflows(query) if execution.id == workflow_id]):
            return True
        await asyncio.sleep(0.1)
    return False


async def test_a_message_and_its_environment_are_found_by_every_search_attribute(stack: Stack, repo: Path) -> None:
    codebase = (await stack.register(repo))["name"]
    conversation = f"search-{uuid.uuid4().hex[:8]}"
    created = await stack.say(conversation, "work here")
    result = created["result"]
    message, environment = created["workflowId"], f"environment:{result['environmentId']}"

    for query in (
        f"IsolatorCodebase = '{codebase}'",
        "IsolatorPlatform = 'test'",
        f"IsolatorConversation = '{conversation}'",
        f"IsolatorBranch = '{result['branch']}'",
        f"IsolatorOutcome = 'created' AND IsolatorConversation = '{conversation}'",
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
