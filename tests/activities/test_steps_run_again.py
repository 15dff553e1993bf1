"""A local activity runs again when the workflow task that held its result is lost (a loaded or killed
worker). A step that claims something once (a reply, a retirement) must tell the message that claimed
it so again, or what only the claimant does (say it, end the worktree's workflow, start a new
codebase's warm pool) never happens."""

from __future__ import annotations

import uuid

import asyncpg
from temporalio.client import Client

from activities.chat.conversations import ConversationActivities
from activities.chat.replies import ReplyActivities
from activities.codebases.registration import CodebaseActivities
from activities.environments.records import EnvironmentActivities
from activities.runs.queue import AgentRunActivities
from isolator.contracts.agent import QueueRunInput
from isolator.contracts.codebase import RepositoryInfo
from isolator.contracts.environment import RetireInput
from isolator.contracts.message import ConversationInput
from isolator.settings import Settings


async def test_the_no_agent_reply_is_claimed_again_by_its_message_and_by_no_other(
    settings: Settings, db: asyncpg.Pool, temporal: Client
) -> None:
    runs = AgentRunActivities(settings, db, temporal, ReplyActivities(db))
    conversation = f"claims-{uuid.uuid4().hex[:8]}"

    def message(key: str) -> QueueRunInput:
        return QueueRunInput(str(uuid.uuid4()), str(uuid.uuid4()), "test", conversation, "hello", key)

    first = await runs.queue_agent_run(message("message-1"))
    again = await runs.queue_agent_run(message("message-1"))
    other = await runs.queue_agent_run(message("message-2"))

    assert (first.outcome, first.tell_no_agent) == ("no_agent", True)
    assert (again.outcome, again.tell_no_agent) == ("no_agent", True)
    assert (other.outcome, other.tell_no_agent) == ("no_agent", False)
    assert await db.fetchval("SELECT count(*) FROM outbound_messages WHERE platform_conversation_id = $1",
                             conversation) == 1


async def test_a_retirement_is_marked_again_by_its_message_and_by_no_other(
    settings: Settings, db: asyncpg.Pool
) -> None:
    conversation = await ConversationActivities(db).record_conversation(ConversationInput("test", "retire-1"))
    codebase = await db.fetchval("INSERT INTO codebases (name, canonical_path, default_branch, host) "
                                 "VALUES ('app', '/src/app', 'main', 'h') RETURNING id")
    environment = str(await db.fetchval(
        "INSERT INTO isolation_environments (codebase_id, workflow_type, workflow_id, working_path, branch_name) "
        "VALUES ($1, 'thread', 'test:retire-1', '/worktrees/app/gone', 'thread-gone') RETURNING id", codebase))
    environments = EnvironmentActivities(db, settings)

    first = await environments.retire_environment(RetireInput(environment, conversation.row_id, "message-1"))
    destroyed_at = await db.fetchval("SELECT destroyed_at FROM isolation_environments WHERE id = $1", environment)
    again = await environments.retire_environment(RetireInput(environment, conversation.row_id, "message-1"))
    other = await environments.retire_environment(RetireInput(environment, conversation.row_id, "message-2"))

    assert (first.marked_now, again.marked_now, other.marked_now) == (True, True, False)
    row = await db.fetchrow("SELECT status, destroyed_at FROM isolation_environments WHERE id = $1", environment)
    assert (row["status"], row["destroyed_at"]) == ("destroyed", destroyed_at)


async def test_a_codebase_is_new_again_to_its_registration_and_to_no_other(
    settings: Settings, db: asyncpg.Pool
) -> None:
    codebases = CodebaseActivities(settings, db)

    def registration(key: str) -> RepositoryInfo:
        return RepositoryInfo("again", "/src/again", "main", None, settings.host, registered_by=key)

    first = await codebases.record_codebase(registration("registration-1"))
    again = await codebases.record_codebase(registration("registration-1"))
    other = await codebases.record_codebase(registration("registration-2"))

    assert (first.created, again.created, other.created) == (True, True, False)
    assert first.codebase is not None and again.codebase is not None and other.codebase is not None
    assert first.codebase.id == again.codebase.id == other.codebase.id
