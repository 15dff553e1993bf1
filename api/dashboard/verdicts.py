"""The cleanup's verdict on one row of the codebase page, from what the database knows: the merge
proof the last scheduled cleanup recorded, the conversations' activity and the agent's runs. Git is not
asked for a thousand rows; the cleanup page's dry run asks it, and `/worktree why` does for one."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from isolator.cleanup_rules import NEVER_STALE_PLATFORMS


def verdict(row: dict[str, Any], threshold_days: int) -> str:
    if row["status"] == "hibernated":
        return "hibernated: archived to save disk, back with the next message"
    if row["busy"]:
        return "kept: agent running or queued"
    days = _days_inactive(row)
    if row["merge_proof"]:
        return (f"kept although merged: still used by {row['live']} conversation(s)" if row["live"]
                else f"would be removed: merged ({row['merge_proof']})")
    if row["created_by_platform"] not in NEVER_STALE_PLATFORMS and days >= threshold_days:
        return (f"kept although stale: still used by {row['live']} conversation(s)" if row["live"]
                else f"would be removed: {days} days inactive (unless it has unpushed commits)")
    return f"kept: active {'today' if days == 0 else f'{days} day(s) ago'}, stale after {threshold_days} days"


def _days_inactive(row: dict[str, Any]) -> int:
    return int((datetime.now(timezone.utc) - row["last_activity"]).total_seconds() // 86400)
