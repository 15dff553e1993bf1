"""The one answer a refused sender gets per conversation and hour (a local activity)."""

from __future__ import annotations

import asyncpg
from temporalio import activity

from isolator.contracts.trust import RefusalReplyInput

# Claims the conversation's answer unless another message claimed it within the hour; the same message
# claims it again (a retried activity). Answers older than the hour are pruned on the way.
_CLAIM = """
WITH pruned AS (
    DELETE FROM refusal_replies WHERE replied_at < now() - interval '1 hour'
    AND NOT (platform = $1 AND platform_conversation_id = $2)
)
INSERT INTO refusal_replies AS r (platform, platform_conversation_id, claimed_by) VALUES ($1, $2, $3)
ON CONFLICT (platform, platform_conversation_id) DO UPDATE SET replied_at = now(), claimed_by = EXCLUDED.claimed_by
WHERE r.replied_at < now() - interval '1 hour' OR r.claimed_by = EXCLUDED.claimed_by
RETURNING 1
"""


class RefusalActivities:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    @activity.defn
    async def claim_refusal_reply(self, request: RefusalReplyInput) -> bool:
        """True when this message is the one to answer its conversation's refusal this hour."""
        claimed = await self.pool.fetchval(_CLAIM, request.platform, request.conversation_id, request.claimed_by)
        return claimed is not None
