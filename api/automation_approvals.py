"""Where a run's request was asked, and who may answer it there, for `answer_press` (api/approvals.py).

A chat's run asks in its own conversation, answered by the person whose message started it or an admin.
An automation's firing (docs/automations.md) talks in a conversation of its own (platform `automation`)
that no one reads: its requests go, with their buttons, to the automation's report place
(activities/chat/replies.py `_forward_to_report_place`), and are answered there by the automation's
`owners` (`platform:user`) or that platform's ADMIN_USERS.
"""

from __future__ import annotations

from dataclasses import dataclass

import asyncpg

AUTOMATION = "automation"


@dataclass(frozen=True)
class AskedIn:
    platform: str
    conversation_id: str
    # An automation's firing: its owners as `platform:user` (ADMIN_USERS may answer too); None: a chat's run.
    owners: frozenset[str] | None = None

    def here(self, platform: str, conversation_id: str | None) -> bool:
        """A press on this platform, in this conversation (when the platform says where). An automation's
        Slack place is a channel (`C0123:`), pressed in the request's own thread (`C0123:<ts>`); one named
        `#name` is known to a press only by its id: there the platform alone decides."""
        if platform != self.platform or conversation_id is None:
            return platform == self.platform
        if self.owners is not None and platform == "slack":
            channel = self.conversation_id.partition(":")[0]
            return channel.startswith("#") or conversation_id.partition(":")[0] == channel
        return conversation_id == self.conversation_id

    def owner(self, user: str) -> bool:
        return self.owners is not None and f"{self.platform}:{user}" in self.owners


async def asked_in(pool: asyncpg.Pool, approval: asyncpg.Record) -> AskedIn:
    """The request's conversation; an automation's firing's, its report place."""
    if approval["platform"] != AUTOMATION:
        return AskedIn(approval["platform"], approval["conversation_id"])
    firing = await pool.fetchrow(
        """SELECT f.report_platform, f.report_conversation,
                  coalesce(a.definition->'owners', '[]'::jsonb) AS owners
           FROM automation_firings f JOIN automations a ON a.name = f.automation
           WHERE f.conversation_id = $1 ORDER BY f.started_at DESC LIMIT 1""",
        approval["conversation_id"])
    if firing is None:  # its automation is gone: the dashboard's operator alone may answer
        return AskedIn(AUTOMATION, approval["conversation_id"], frozenset())
    owners = firing["owners"]
    return AskedIn(firing["report_platform"], firing["report_conversation"],
                   frozenset(owner for owner in owners if isinstance(owner, str)) if isinstance(owners, list)
                   else frozenset())
