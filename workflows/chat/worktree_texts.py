"""What the bot says about worktree management: `/worktree`, `/status` counts, limits and cleanups."""

from __future__ import annotations

from isolator.cleanup_rules import CleanupPlan
from isolator.contracts.cleanup import Breakdown, CleanupReport, TrackedEnvironment
from isolator.contracts.worktree import WorktreeFacts, WorktreeReady
from isolator.merge_words import merged_words
from workflows.chat.setup_texts import NO_SETUP_COMMANDS, NO_SETUP_FILE
from workflows.chat.texts import config_note, quoted_safely, started_from

USAGE = """Usage:
`/worktree create <name>`: a new worktree for a task
`/worktree list`: this repository's worktrees
`/worktree remove [--force] [name]`: remove this conversation's worktree, or the named one
`/worktree link <issue-42|pr-99|thread-xxxx|task-name>`: work in an existing worktree
`/worktree cleanup merged|stale [--dry-run]`: remove merged or stale worktrees (or list what would go)
`/worktree orphans`: worktrees git knows that nothing tracks
`/worktree setup`: run this worktree's set-up (`.isolator.toml`) again
`/worktree why [name]`: everything known about this conversation's worktree, or the named one, and what the cleanup would do with it
`/worktree removed`: removed worktrees that can still be restored
`/worktree restore <name>`: bring a removed worktree back, with its uncommitted changes"""

LINK_USAGE = """Usage: `/worktree link <name>`, a worktree's name as `/worktree list` shows it

Examples:
  `/worktree link issue-42`
  `/worktree link pr-99`
  `/worktree link thread-abc123`
  `/worktree link task-my-feature`"""

CREATE_USAGE = "Usage: `/worktree create <name>`, for example `/worktree create fix-login`."


def invalid_task_name(name: str) -> str:
    return (
        f"`{quoted_safely(name)}` cannot be a worktree name. Use up to 50 ASCII letters (a-z, A-Z), digits, "
        "`.`, `_` or `-`, starting with a letter or digit and without `..`, for example `/worktree create fix-login`."
    )


def failed(subcommand: str, reason: str) -> str:
    return f"`/worktree {subcommand}` failed: {reason}"


def task_created(worktree: WorktreeReady) -> str:
    return (f"Created worktree `{worktree.path}` on branch `{worktree.branch}`{started_from(worktree.base)}. "
            "This conversation now works in it." + config_note(worktree.config_problem))


def task_exists(branch: str, path: str) -> str:
    return f"Worktree `{branch}` already exists at `{path}`. This conversation now works in it."


def counts(breakdown: Breakdown, stale_days: int) -> str:
    return (
        f"Worktrees: {breakdown.total}/{breakdown.limit}\n"
        f"  • {breakdown.merged} merged (can auto-remove)\n"
        f"  • {breakdown.stale} stale ({stale_days}+ days inactive)\n"
        f"  • {breakdown.active} active"
    )


def listing(codebase: str, lines: list[tuple[str, str, bool, int | None]], breakdown: Breakdown) -> str:
    if not lines:
        return f"No worktrees for **{codebase}** yet.\nWorktrees: 0/{breakdown.limit}"
    rows = [f"• `{branch}` at `{path}` ({_size(size)})" + (" ← this conversation's" if active else "")
            for branch, path, active, size in lines]
    return (f"Worktrees of **{codebase}** ({breakdown.total}/{breakdown.limit}):\n" + "\n".join(rows) + "\n"
            + disk_total([size for *_, size in lines]))


def disk_total(sizes: list[int | None]) -> str:
    """The codebase's worktrees on disk; those not counted within the time budget are said so."""
    counted = [size for size in sizes if size is not None]
    total = f"Disk: {human_size(sum(counted))} in all"
    missing = len(sizes) - len(counted)
    return total + (f" ({missing} not counted in time)" if missing else "")


def _size(size: int | None) -> str:
    return human_size(size) if size is not None else "size not counted in time"


def human_size(size: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size / 2**10:.0f} KiB"


def no_worktree_here(subcommand: str) -> str:
    return (f"This conversation has no worktree. Name one: `/worktree {subcommand} <name>` "
            "(see `/worktree list`).")


def unknown_worktree(name: str, codebase: str) -> str:
    return f"No active worktree `{quoted_safely(name)}` in **{codebase}**. See `/worktree list`."


def not_a_worktree_name(name: str) -> str:
    return (f"No worktree `{quoted_safely(name)}`: a worktree's name starts with `issue-`, `pr-`, `thread-` or "
            "`task-` (`/worktree list` shows them).")


def unknown_subcommand(name: str) -> str:
    return f"Unknown subcommand `/worktree {quoted_safely(name, 40)}`.\n\n{USAGE}"


def still_used(branch: str, others: int) -> str:
    return (
        f"Worktree `{branch}` is still used by {others} other conversation(s), so it was not removed. "
        "It goes when the last of them is done."
    )


def linked(branch: str, path: str, left_alone: str | None = None) -> str:
    """`left_alone`: the branch of the worktree the conversation left, when no other conversation has it."""
    text = f"This conversation now works in branch `{branch}` at `{path}`."
    if left_alone:
        text += (f" No conversation works in `{left_alone}` any more: `/worktree link {left_alone}` comes back to "
                 f"it, `/worktree remove {left_alone}` removes it (archived first), or the cleanup takes it once "
                 "it is merged or stale.")
    return text


def already_linked(branch: str, path: str) -> str:
    return f"This conversation already works in branch `{branch}` at `{path}`."


def cleanup_result(kind: str, report: CleanupReport, breakdown: Breakdown) -> str:
    parts = []
    if report.removed:
        parts.append(f"Cleaned up {len(report.removed)} {kind} worktree(s):\n"
                     + "\n".join(f"• {entry}" for entry in report.removed))
    else:
        parts.append(f"No {kind} worktrees to clean up.")
    if report.skipped:
        parts.append(f"Skipped {len(report.skipped)}:\n"
                     + "\n".join(f"• {entry.branch} ({entry.reason})" for entry in report.skipped))
    parts.append(f"Worktrees: {breakdown.total}/{breakdown.limit}")
    return "\n\n".join(parts)


def cleanup_preview(kind: str, plan: CleanupPlan) -> str:
    """`/worktree cleanup <kind> --dry-run`: what would go, and why, and what would stay."""
    parts = [f"Would clean up {len(plan.remove)} {kind} worktree(s):\n"
             + "\n".join(f"• {candidate.environment.branch} ({candidate.reason()})" for candidate in plan.remove)
             if plan.remove else f"No {kind} worktrees would be cleaned up."]
    if plan.skipped:
        parts.append(f"Would keep {len(plan.skipped)}:\n"
                     + "\n".join(f"• {entry.branch} ({entry.reason})" for entry in plan.skipped))
    parts.append("Nothing was removed (`--dry-run`).")
    return "\n\n".join(parts)


def orphans(worktrees: list[str], missing: list[str]) -> str:
    if not worktrees and not missing:
        return "No orphans: every worktree is tracked and every tracked path exists."
    parts = []
    if worktrees:
        parts.append("Worktrees git knows that no conversation tracks:\n" + "\n".join(f"• `{p}`" for p in worktrees))
    if missing:
        parts.append("Tracked worktrees whose path is gone:\n" + "\n".join(f"• `{p}`" for p in missing))
    return "\n\n".join(parts)


NOTHING_TO_SET_UP = "This conversation has no worktree yet: send a message to get one, then `/worktree setup`."


def setup_ran(branch: str, state: str) -> str:
    if state == "ready":
        return f"The set-up of `{branch}` ran again: it is ready."
    if state == "failed":
        return f"The set-up of `{branch}` failed again (see the message above). Fix it and run `/worktree setup` again."
    if state == "skipped":
        return f"The set-up of `{branch}` was skipped: see `.isolator.toml` on the default branch."
    if state in (NO_SETUP_FILE, NO_SETUP_COMMANDS):
        missing = ("the default branch has no `.isolator.toml`" if state == NO_SETUP_FILE
                   else "the default branch's `.isolator.toml` has no `[setup] commands`")
        return (f"The set-up of `{branch}` has nothing to run: none is configured, as {missing}. A set-up goes in "
                "`.isolator.toml` at the repository's root, committed on the default branch, under `[setup]`: "
                "`commands = [\"npm ci\"]`, for example (docs/ready-to-work.md). Run the set-up again once it is there.")
    return f"The set-up of `{branch}` did not run: the worktree is being removed."


RETRIED_HOURLY = "The service tries the removal again every hour; a message in this conversation cancels it."


def removed_at_last(branch: str, report: str) -> str:
    """The service's refused removal, tried again every hour, went through."""
    return f"The removal of `{branch}`, refused before and tried again every hour, went through. {report}"


def made_room(count: int) -> str:
    return f"Cleaned up {count} merged worktree(s) to make room."


def limit_reached(codebase: str, breakdown: Breakdown, stale_days: int) -> str:
    options = []
    if breakdown.stale:
        options.append("• `/worktree cleanup stale` - Remove stale worktrees")
    options += ["• `/worktree list` - See all worktrees", "• `/worktree remove <name>` - Remove specific worktree"]
    return (
        f"Worktree limit reached ({breakdown.total}/{breakdown.limit}) for **{codebase}**.\n\n"
        f"**Status:**\n"
        f"• {breakdown.merged} merged (can auto-remove)\n"
        f"• {breakdown.stale} stale (no activity in {stale_days}+ days)\n"
        f"• {breakdown.active} active\n\n"
        "**Options:**\n" + "\n".join(options)
    )


WHY_USAGE = ("Usage: `/worktree why [name]`: everything known about this conversation's worktree, or the named "
             "one, for example `/worktree why issue-42`.")


def why(environment: TrackedEnvironment, facts: WorktreeFacts, verdict: str, stale_days: int,
        fresh: bool = False) -> str:
    """`/worktree why <name>`: its state and the reasons behind it, as the cleanup rules see them (a
    `fresh` branch, still at its start commit, has no work of its own: neither merged nor unmerged)."""
    ref = environment.ref
    lines = [f"`{ref.branch}` at `{ref.working_path}`" + ("" if facts.exists else " (gone from disk)")]
    when = "today" if environment.days_inactive == 0 else f"{_days(environment.days_inactive)} ago"
    lines.append(f"Last activity: {when} (stale after {stale_days} days"
                 + (", except Telegram chats" if environment.created_by_platform != "telegram" else
                    "; a Telegram chat never goes stale") + ")")
    lines.append(f"Cleanup: {verdict}")
    lines.append("Merged: " + merged_words(facts.merged_by, fresh))
    lines.append(_listed("Uncommitted", facts.uncommitted, facts.uncommitted_count, "none"))
    lines.append(_listed("Unpushed commits", facts.unpushed, facts.unpushed_count, "none"))
    lines.append(f"Disk: {human_size(facts.disk_bytes)}" + ("" if facts.disk_complete else " at least (counting stopped at its time limit)"))
    conversations = [f"`{conversation.platform}:{quoted_safely(conversation.conversation_id)}` "
                     + ("(active today)" if conversation.days_inactive == 0
                        else f"({_days(conversation.days_inactive)} quiet)")
                     for conversation in environment.open_conversations]
    lines.append("Conversations: " + (", ".join(conversations) if conversations else "none open"))
    lines.append("Archive refs: " + (", ".join(f"`{ref}`" for ref in facts.archive_refs) or "none"))
    return "\n".join(lines)


def _listed(title: str, items: list[str], count: int, empty: str) -> str:
    if not count:
        return f"{title}: {empty}"
    more = f"\n  … and {count - len(items)} more" if count > len(items) else ""
    return f"{title}: {count}\n" + "\n".join(f"  `{quoted_safely(item, 120)}`" for item in items) + more


def _days(days: int) -> str:
    return "1 day" if days == 1 else f"{days} days"
