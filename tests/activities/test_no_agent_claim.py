"""The one "no agent answers here" reply of a conversation is claimed by one message. A local activity
runs again when the workflow task that held its result is lost (a loaded worker): the same message must
claim it again, or nobody says it."""

from __future__ import annotations

import uuid

import asyncpg
from temporalio.client import Client

from activities.agent_runs import AgentRunActivities
from activities.replies import ReplyActivities
from isolator.contracts.agent import QueueRunInput
from isolator.settings import Settings


async def test_the_claiming_message_claims_again_and_no_other_does(
    settings: Settings, db: asyncpg.Pool, temporal: Client
) -> None:
    runs = AgentRunActivities(settings, db, temporal, ReplyActivities(db))
    conversation = f"claims-{uuid.uuid4().hex[:8]}"

    def message(key: str) -> QueueRunInput:
        return QueueRunInput(str(uuid.uuid4()), str(uuid.uuid4()), "test", conversation, "hello", key)

    first = await runs.queue_agent_run(message("message-1"))
    again = await runs.queue_agent_run(message("message-1"))  # its activity run a second time
    other = await runs.queue_agent_run(message("message-2"))

    assert (first.outcome, first.tell_no_agent) == ("no_agent", True)
    assert (again.outcome, again.tell_no_agent) == ("no_agent", True)
    assert (other.outcome, other.tell_no_agent) == ("no_agent", False)
    assert await db.fetchval("SELECT count(*) FROM outbound_messages WHERE platform_conversation_id = $1",
                             conversation) == 1
