"""Exactly one worktree per identity, however many messages arrive at once, and one run per delivery."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from temporalio.client import WorkflowExecutionStatus

from isolator.settings import Settings
from tests.conftest import Stack
from tests.gitrepos import first_replies, worktree_paths
from workflows.naming import thread_branch

BURST = 50


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """Room for every conversation of a burst: the limit is tested on its own."""
    return settings.model_copy(update={"max_worktrees_per_codebase": 4 * BURST})

async def test_a_burst_into_one_new_conversation_makes_one_worktree_row_and_reply(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    answers = await asyncio.gather(*(stack.say("burst", f"message {n}") for n in range(BURST)))

    paths = {answer["result"]["workingPath"] for answer in answers}
    assert len(paths) == 1, paths
    assert worktree_paths(repo) == list(paths)
    outcomes = [answer["result"]["outcome"] for answer in answers]
    assert outcomes.count("created") == 1, outcomes
    assert set(outcomes) <= {"created", "attached", "reused"}
    rows = await stack.db.fetch("SELECT id FROM isolation_environments")
    assert len(rows) == 1
    # Once, that no agent answers: by whichever message of the burst claimed the notice first.
    assert sorted(await stack.replies("burst")) == sorted(first_replies(thread_branch("test:burst"), repo))
    assert await stack.db.fetchval("SELECT count(*) FROM conversations") == 1


async def test_a_burst_of_different_conversations_makes_one_worktree_each(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    conversations = [f"many-{n}" for n in range(BURST)]
    answers = await asyncio.gather(*(stack.say(conversation) for conversation in conversations))

    paths = [answer["result"]["workingPath"] for answer in answers]
    assert len(set(paths)) == BURST, "no two conversations share a worktree"
    assert sorted(worktree_paths(repo)) == sorted(paths)
    outcomes = [answer["result"]["outcome"] for answer in answers]
    assert outcomes == ["created"] * BURST, [answer["result"] for answer in answers if answer["result"]["outcome"] != "created"]
    for conversation, answer in zip(conversations, answers):
        assert answer["result"]["branch"] == thread_branch(f"test:{conversation}")
        assert await stack.replies(conversation) == first_replies(thread_branch(f"test:{conversation}"), repo)
    assert await stack.db.fetchval("SELECT count(*) FROM isolation_environments WHERE status = 'active'") == BURST


async def test_a_redelivered_message_key_starts_nothing_new(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    first = await stack.say("redelivery", "hello", messageId="delivery-1")
    again = await stack.say("redelivery", "hello", messageId="delivery-1")
    assert again["workflowId"] == first["workflowId"]
    assert again["result"] == first["result"]

    description = await stack.temporal.get_workflow_handle(first["workflowId"]).describe()
    assert description.status == WorkflowExecutionStatus.COMPLETED
    assert description.run_id == first["runId"], "the second delivery started no new run"
    assert await stack.replies("redelivery") == first_replies(thread_branch("test:redelivery"), repo)
    assert await stack.db.fetchval("SELECT count(*) FROM outbound_messages") == 2


async def test_redeliveries_while_the_first_still_runs_join_it(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    answers = await asyncio.gather(
        *(stack.say("racing-redelivery", "hello", messageId="delivery-2") for _ in range(10))
    )
    assert len({answer["workflowId"] for answer in answers}) == 1
    assert len({answer["result"]["environmentId"] for answer in answers}) == 1
    assert await stack.replies("racing-redelivery") == first_replies(thread_branch("test:racing-redelivery"), repo)
