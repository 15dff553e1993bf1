"""Helpers of the chat-command tests: send a command and read its replies, and look at the rows
and folders a command changed."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Stack


async def command(stack: Stack, conversation: str, text: str) -> list[str]:
    """Send a command; the replies it produced, also checked as delivered to the conversation."""
    answer = await stack.say(conversation, text)
    assert answer["result"]["outcome"] == "command", answer
    replies = answer["result"]["replies"]
    assert replies, f"{text!r} got no answer"
    delivered = await stack.replies(conversation)
    assert delivered[-len(replies):] == replies
    return replies


async def say_one(stack: Stack, conversation: str, text: str) -> str:
    (reply,) = await command(stack, conversation, text)
    return reply


def task_path(stack: Stack, name: str) -> Path:
    return stack.settings.worktree_base.resolve() / "project" / f"task-{name}"


async def active_rows(stack: Stack) -> list[dict]:
    rows = await stack.db.fetch(
        "SELECT * FROM isolation_environments WHERE status = 'active' ORDER BY created_at, id"
    )
    return [dict(row) for row in rows]


async def environment_of(stack: Stack, conversation: str) -> dict | None:
    row = await stack.db.fetchrow(
        """SELECT e.* FROM conversations c JOIN isolation_environments e ON e.id = c.environment_id
           WHERE c.platform_conversation_id = $1""",
        conversation,
    )
    return dict(row) if row else None


async def cwd_of(stack: Stack, conversation: str) -> str | None:
    return await stack.db.fetchval("SELECT cwd FROM conversations WHERE platform_conversation_id = $1", conversation)
