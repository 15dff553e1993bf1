"""A high-cardinality guard (docs/observability.md): after 50 conversations of 50 users, no label of /metrics
takes a conversation's id or a user's name; the series stay as few as for one conversation."""

from __future__ import annotations

import asyncio
import sys
import uuid
from pathlib import Path

import pytest

from isolator.settings import Settings
from tests.conftest import Stack
from tests.metrics import label_values, scrape

CONVERSATIONS = 50


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"max_worktrees_per_codebase": CONVERSATIONS + 5,
                                       "agent_command_line": f"{sys.executable} -c \"print('ok')\""})


async def test_no_label_takes_a_conversation_or_a_user_after_50_conversations(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    tag = uuid.uuid4().hex[:6]
    talks = [(f"talk-{tag}-{index}", f"user{tag}{index}") for index in range(CONVERSATIONS)]
    first = await scrape(stack.api)
    for batch in range(0, CONVERSATIONS, 10):  # ten at a time: a loaded machine's workers keep up
        said = await asyncio.gather(*(stack.api.post("/test/message", params={"wait": "true"}, json={
            "conversationId": talk, "message": f"hello from {user}", "user": user})
            for talk, user in talks[batch:batch + 10]))
        assert all(response.status_code == 200 for response in said), [response.text for response in said]
    await stack.say(talks[0][0], "/status")  # a command too

    samples = await scrape(stack.api)
    values = label_values(samples)
    leaked = {value for value in values for talk, user in talks if talk in value or user in value}
    assert leaked == set(), leaked
    assert any(name == "isolator_messages_total" for name, _ in samples)
    # Fifty conversations add no more series than a handful of outcomes and states do.
    assert len(samples) - len(first) < 150, sorted({name for name, _ in samples} - {name for name, _ in first})
