"""Replies to the platforms. Every reply is written to the outbound log first, then delivered once."""

from __future__ import annotations

from typing import Awaitable, Callable

import asyncpg
from temporalio import activity
from temporalio.exceptions import ApplicationError

from isolator.contracts.message import ReplyInput

# Delivers one reply to a platform; raises to be retried.
Deliver = Callable[[ReplyInput], Awaitable[None]]


async def _deliver_to_test_adapter(reply: ReplyInput) -> None:
    """The test adapter reads its replies from the outbound log itself: nothing to send."""


class ReplyActivities:
    def __init__(self, pool: asyncpg.Pool, deliverers: dict[str, Deliver] | None = None) -> None:
        self.pool = pool
        self.deliverers: dict[str, Deliver] = {"test": _deliver_to_test_adapter, **(deliverers or {})}

    @activity.defn
    async def send_reply(self, reply: ReplyInput) -> None:
        deliver = self.deliverers.get(reply.platform)
        if deliver is None:
            raise ApplicationError(f"no reply channel for platform {reply.platform!r}", non_retryable=True)
        status = await self.pool.fetchval(
            """WITH inserted AS (
                   INSERT INTO outbound_messages (idempotency_key, platform, platform_conversation_id, body)
                   VALUES ($1, $2, $3, $4)
                   ON CONFLICT (idempotency_key) DO NOTHING
                   RETURNING status)
               SELECT status FROM inserted
               UNION ALL SELECT status FROM outbound_messages WHERE idempotency_key = $1
               LIMIT 1""",
            reply.idempotency_key, reply.platform, reply.conversation_id, reply.text,
        )
        if status == "sent":
            return
        try:
            await deliver(reply)
        except ApplicationError as error:
            if error.non_retryable:  # the platform's final word: the log shows the reply never went out
                await self.pool.execute(
                    "UPDATE outbound_messages SET status = 'failed' WHERE idempotency_key = $1", reply.idempotency_key
                )
            raise
        await self.pool.execute(
            "UPDATE outbound_messages SET status = 'sent', sent_at = now() WHERE idempotency_key = $1",
            reply.idempotency_key,
        )
