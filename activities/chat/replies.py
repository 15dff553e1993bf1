"""Replies to the platforms. Every reply is written to the outbound log first, then delivered once."""

from __future__ import annotations

import dataclasses
import logging
from typing import Awaitable, Callable

import asyncpg
from temporalio import activity
from temporalio.exceptions import ApplicationError

from isolator.contracts.message import ReplyInput

# Delivers one reply to a platform, or with the platform's id of an earlier message, updates that
# message in place; returns the platform's id of the message (None where it has none). Raises to be
# retried, a non-retryable ApplicationError for a refusal, MessageGone when the message to update is gone.
Deliver = Callable[..., Awaitable[str | None]]

log = logging.getLogger(__name__)


def split_text(text: str, limit: int) -> list[str]:
    """A platform's parts of a text longer than it takes at once: at most `limit` characters each, cut
    after a line where one ends close enough."""
    parts = []
    while len(text) > limit:
        cut = text.rfind("\n", limit // 2, limit)
        cut = cut + 1 if cut != -1 else limit
        parts.append(text[:cut])
        text = text[cut:]
    return [*parts, text] if text or not parts else parts


class MessageGone(Exception):
    """The platform cannot edit the message any more: deleted (a 404), or past its time to edit."""


async def _deliver_to_test_adapter(reply: ReplyInput, replacing: str | None = None) -> str | None:
    """The test adapter reads its replies, latest text included, from the outbound log itself."""
    return None


class ReplyActivities:
    def __init__(self, pool: asyncpg.Pool, deliverers: dict[str, Deliver] | None = None) -> None:
        self.pool = pool
        self.deliverers: dict[str, Deliver] = {"test": _deliver_to_test_adapter,
                                               "automation": self._forward_to_report_place, **(deliverers or {})}

    @activity.defn
    async def send_reply(self, reply: ReplyInput) -> None:
        await self.deliver_once(reply)

    async def deliver_once(self, reply: ReplyInput) -> None:
        """Log, then deliver once; a reply that `updates` an earlier one edits that message."""
        if reply.updates is not None:
            await self._update(reply, reply.updates)
            return
        deliver = self.deliverers.get(reply.platform)
        if deliver is None:
            raise ApplicationError(f"no reply channel for platform {reply.platform!r}", non_retryable=True)
        status = await self.pool.fetchval(
            """WITH inserted AS (
                   INSERT INTO outbound_messages (idempotency_key, platform, platform_conversation_id, body, buttons)
                   VALUES ($1, $2, $3, $4, $5::jsonb)
                   ON CONFLICT (idempotency_key) DO NOTHING
                   RETURNING status)
               SELECT status FROM inserted
               UNION ALL SELECT status FROM outbound_messages WHERE idempotency_key = $1
               LIMIT 1""",
            reply.idempotency_key, reply.platform, reply.conversation_id, reply.text, _buttons(reply),
        )
        if status == "sent":
            return
        try:
            message_id = await deliver(reply)
        except ApplicationError as error:
            if error.non_retryable:  # the platform's final word: the log shows the reply never went out
                await self.pool.execute(
                    "UPDATE outbound_messages SET status = 'failed' WHERE idempotency_key = $1", reply.idempotency_key
                )
            raise
        await self.pool.execute(
            """UPDATE outbound_messages SET status = 'sent', sent_at = now(), platform_message_id = $2, body = $3
               WHERE idempotency_key = $1""",
            reply.idempotency_key, message_id, reply.text,
        )

    async def _update(self, reply: ReplyInput, original: str) -> None:
        row = await self.pool.fetchrow(
            "SELECT status, platform_message_id FROM outbound_messages WHERE idempotency_key = $1", original
        )
        if row is None or row["status"] != "sent":  # the original never went out: this text goes instead
            await self.deliver_once(dataclasses.replace(reply, idempotency_key=original, updates=None))
            return
        deliver = self.deliverers[reply.platform]
        message_id = row["platform_message_id"]
        if message_id is not None or reply.platform in ("test", "automation"):
            try:
                await deliver(reply, message_id)
            except MessageGone as gone:
                # Retrying cannot bring it back: the text goes out as a new message at once, and the
                # next updates edit that one.
                log.info("message %s of %s is gone (%s): sent anew", message_id, reply.conversation_id, gone)
                message_id = await deliver(dataclasses.replace(reply, updates=None))
        await self.pool.execute(
            "UPDATE outbound_messages SET body = $2, platform_message_id = $3, buttons = $4::jsonb "
            "WHERE idempotency_key = $1",
            original, reply.text, message_id, _buttons(reply),
        )

    async def _forward_to_report_place(self, reply: ReplyInput, replacing: str | None = None) -> str | None:
        """An automation's firing (docs/automations.md) talks in a conversation of its own, kept in the log;
        what asks a person (a request with buttons, and its edits) goes to the automation's report place."""
        forwarded_original = f"{reply.updates}:report" if reply.updates else None
        if not reply.buttons and (forwarded_original is None or await self.pool.fetchval(
                "SELECT true FROM outbound_messages WHERE idempotency_key = $1", forwarded_original) is None):
            return None
        place = await self.pool.fetchrow(
            "SELECT report_platform, report_conversation FROM automation_firings WHERE conversation_id = $1 "
            "ORDER BY started_at DESC LIMIT 1", reply.conversation_id)
        if place is not None:
            await self.deliver_once(dataclasses.replace(
                reply, platform=place["report_platform"], conversation_id=place["report_conversation"],
                idempotency_key=f"{reply.idempotency_key}:report", updates=forwarded_original))
        return None


def _buttons(reply: ReplyInput) -> list[dict]:
    return [dataclasses.asdict(button) for button in reply.buttons]
