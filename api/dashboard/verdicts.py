"""The cleanup's verdict on one row of the codebase page, from what the database knows: the merge
proof the last scheduled cleanup recorded, the conversations' activity and the agent's runs; and a
refused removal, from the environment's workflow (api/dashboard/refusals.py). Git is not asked for a
thousand rows; the cleanup page's dry run asks it, and `/worktree why` does for one."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from api.dashboard.refusals import Refusal
from isolator.cleanup_rules import NEVER_STALE_PLATFORMS
from isolator.merge_words import merged_cell

# What to do about the service's own refused removal, on the dashboard (chat's message names chat's commands).
REFUSED_ADVICE = ("tried again every hour, until a message in one of its conversations cancels it. Repair it, or "
                  "remove it from its page with Force ticked (archived first, restorable)")


def verdict(row: dict[str, Any], threshold_days: int, refusal: Refusal | None = None) -> str:
    if row["state"] == "refused":
        return f"removal refused: {refused_words(refusal)}; {REFUSED_ADVICE}"
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


def merged_column(row: dict[str, Any]) -> str:
    """The Merged column: what the last scheduled cleanup proved, worded as `/worktree why` words it;
    empty while no cleanup has found its work in the default branch."""
    return merged_cell(row["merge_proof"], fresh=False) if row["merge_proof"] else ""


def refused_words(refusal: Refusal | None) -> str:
    """"uncommitted changes, since 2026-11-28 10:02 UTC", or what of it is known."""
    if refusal is None:
        return "its workflow did not say why just now"
    since = f", since {refusal.since.astimezone(timezone.utc):%Y-%m-%d %H:%M} UTC" if refusal.since else ""
    return refusal.reason + since


def _days_inactive(row: dict[str, Any]) -> int:
    return int((datetime.now(timezone.utc) - row["last_activity"]).total_seconds() // 86400)
