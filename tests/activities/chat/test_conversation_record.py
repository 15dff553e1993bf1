"""record_conversation: one statement that writes only when the conversation's activity is due a touch."""

from __future__ import annotations

import asyncpg

from activities.chat.conversations import ConversationActivities
from isolator.contracts.message import ConversationInput

CONVERSATION = ConversationInput("test", "chat-1")


async def _row(db: asyncpg.Pool) -> asyncpg.Record:
    # xmin changes when the row is updated, xmax when it is even locked (as ON CONFLICT DO UPDATE does)
    return await db.fetchrow(
        "SELECT xmin::text, xmax::text, last_activity_at, closed_at FROM conversations "
        "WHERE platform = $1 AND platform_conversation_id = $2", CONVERSATION.platform, CONVERSATION.conversation_id)


async def _with_codebase(db: asyncpg.Pool) -> None:
    codebase = await db.fetchval(
        "INSERT INTO codebases (name, canonical_path, default_branch, host) VALUES ('app', '/src/app', 'main', 'h') "
        "RETURNING id")
    await db.execute("UPDATE conversations SET codebase_id = $1", codebase)


async def test_a_conversation_touched_within_the_minute_is_only_read(db: asyncpg.Pool) -> None:
    activities = ConversationActivities(db)
    first = await activities.record_conversation(CONVERSATION)
    await _with_codebase(db)
    before = await _row(db)

    again = await activities.record_conversation(CONVERSATION)

    assert again.row_id == first.row_id
    assert again.codebase is not None and again.codebase.name == "app"
    assert await _row(db) == before, "neither written nor locked"
    assert await db.fetchval("SELECT count(*) FROM conversations") == 1


async def test_a_conversation_quiet_for_longer_is_touched(db: asyncpg.Pool) -> None:
    activities = ConversationActivities(db)
    first = await activities.record_conversation(CONVERSATION)
    await _with_codebase(db)
    await db.execute("UPDATE conversations SET last_activity_at = now() - interval '2 minutes'")
    before = await _row(db)

    again = await activities.record_conversation(CONVERSATION)

    after = await _row(db)
    assert again.row_id == first.row_id
    assert again.codebase is not None and again.codebase.name == "app"
    assert after["last_activity_at"] > before["last_activity_at"]


async def test_a_closed_conversation_is_reopened_by_its_next_message(db: asyncpg.Pool) -> None:
    activities = ConversationActivities(db)
    await activities.record_conversation(CONVERSATION)
    await db.execute("UPDATE conversations SET closed_at = now()")

    await activities.record_conversation(CONVERSATION)

    assert (await _row(db))["closed_at"] is None
