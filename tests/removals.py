"""Helpers of the tests of refused removals: a worktree git cannot read, whose only conversation is
closed, so that the service's own removal is refused (and tried again every hour); its workflow's state."""

from __future__ import annotations

import asyncio
from pathlib import Path

from isolator.contracts.environment import ConversationSignal, EnvironmentState, environment_workflow_id
from tests.conftest import Stack
from workflows.environment import EnvironmentWorkflow


async def state_of(stack: Stack, environment_id: str) -> EnvironmentState:
    handle = stack.temporal.get_workflow_handle(environment_workflow_id(environment_id))
    return await handle.query(EnvironmentWorkflow.state)


async def settled(stack: Stack, environment_id: str) -> EnvironmentState:
    """Its state once no removal is waiting or running."""
    for _ in range(300):
        state = await state_of(stack, environment_id)
        if state.pending is None and state.status != "removing":
            return state
        await asyncio.sleep(0.1)
    raise AssertionError(f"environment {environment_id} did not settle: {state}")


async def close_unreadable(stack: Stack, conversation: str, created: dict) -> str:
    """Break the worktree's `.git` (git cannot read it: it is neither archived nor removed), then close
    the test conversation as a platform's close would: its row, then its environment's workflow. Returns
    the `.git` file's text, to repair it with."""
    dot_git = Path(created["workingPath"]) / ".git"
    pointer = dot_git.read_text()
    dot_git.write_text("gitdir: /nowhere\n")
    await stack.db.execute("UPDATE conversations SET closed_at = now() WHERE platform = 'test' "
                           "AND platform_conversation_id = $1", conversation)
    handle = stack.temporal.get_workflow_handle(environment_workflow_id(created["environmentId"]))
    await handle.signal(EnvironmentWorkflow.conversation_closed,
                        ConversationSignal(f"test:{conversation}", key=f"closed:{conversation}"))
    for _ in range(300):
        if (await state_of(stack, created["environmentId"])).status == "removal_refused":
            return pointer
        await asyncio.sleep(0.1)
    raise AssertionError(f"the close of {conversation} was not refused")
