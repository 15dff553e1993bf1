"""What the bot says about archives: `/worktree removed`, `/worktree restore`, and their refusals."""

from __future__ import annotations

from isolator.contracts.archive import ARCHIVE_STORE, RemovedEnvironment, RemovedListing
from workflows.chat.texts import quoted_safely

RESTORE_USAGE = ("Usage: `/worktree restore <name>`, with a name from `/worktree removed`, for example "
                 "`/worktree restore issue-42`.")


def _when(removed: RemovedEnvironment) -> str:
    return removed.removed_at[:16].replace("T", " ") + " UTC"


def _line(removed: RemovedEnvironment) -> str:
    if removed.status == "hibernated":
        return f"- `{removed.branch}`: hibernated {_when(removed)}; its next message brings it back"
    reason = f" ({removed.reason})" if removed.reason else ""
    if removed.holder_branch == removed.branch and removed.holder_status == "active":
        return (f"- `{removed.branch}`: removed {_when(removed)}{reason}; its branch works at `{removed.holder_path}` "
                f"again, and `/worktree restore {removed.branch}` brings the removed files in there")
    return f"- `{removed.branch}`: removed {_when(removed)}{reason}; restorable for {removed.days_left} more day(s)"


def removed_listing(codebase: str, listing: RemovedListing) -> str:
    if not listing.environments and listing.restored:
        return (f"Nothing of `{codebase}` waits to be restored: the {listing.restored} worktree(s) removed in the "
                f"last {listing.retention_days} days are back already (`/worktree list` shows them).")
    if not listing.environments:
        return (f"Nothing of `{codebase}` can be restored: no worktree was removed in the last "
                f"{listing.retention_days} days.")
    lines = [f"Removed worktrees of `{codebase}` that `/worktree restore <name>` brings back:"]
    lines += [_line(removed) for removed in listing.environments]
    return "\n".join(lines)


def nothing_named(name: str, codebase: str) -> str:
    return (f"No removed worktree of `{codebase}` named `{quoted_safely(name)}` can be restored. "
            "`/worktree removed` lists those that can.")


def restored(removed: RemovedEnvironment, attached: bool = True) -> str:
    """`attached`: a conversation asked (a chat command), and works there now; the API attaches none."""
    return (f"Restored `{removed.branch}` at `{removed.working_path}`, as it was when it was removed "
            f"({_when(removed)}), uncommitted and untracked files included."
            + (" This conversation works there now." if attached else ""))


def brought_back(removed: RemovedEnvironment) -> str:
    return (f"Brought back the files of `{removed.branch}` as they were when it was removed ({_when(removed)}), "
            f"uncommitted and untracked ones included, into `{removed.holder_path}`: that worktree works on the "
            "same branch now, and had no changes of its own.")


def kept(removed: RemovedEnvironment, reason: str) -> str:
    return (f"`{removed.branch}` works at `{removed.holder_path}` again, so its removed files were not put over that "
            f"worktree: {reason}. They are kept (for {removed.days_left} more day(s)) in `{removed.archive_ref}`, "
            f"a commit shaped like a stash in the codebase's archive store: `git fetch -q "
            f"\"$(git rev-parse --git-common-dir)/{ARCHIVE_STORE}\" {removed.archive_ref} && git stash apply FETCH_HEAD` "
            f"in `{removed.holder_path}` applies them. Or commit or undo that worktree's changes, then "
            f"`/worktree restore {removed.branch}` again brings them in.")


def woken(removed: RemovedEnvironment) -> str:
    return f"`{removed.branch}` was hibernated; it is back at `{removed.working_path}`, as it was."


def also_removed(others: list[RemovedEnvironment]) -> str:
    lines = ["", "Earlier removals under this name can be restored too, with "
                 "`POST /api/environments/<id>/restore`:"]
    lines += [f"- `{other.id}`: removed {_when(other)}" + (f" ({other.reason})" if other.reason else "")
              for other in others]
    return "\n".join(lines)


def already_restored(branch: str) -> str:
    return f"`{branch}` was restored already: `/worktree list` shows it."


def taken(removed: RemovedEnvironment) -> str:
    """Another worktree holds the removed one's folder or its work (not on the same branch: that one takes
    the files in)."""
    holder = f"the worktree at `{removed.holder_path}` (branch `{removed.holder_branch}`)"
    if removed.holder_status == "hibernated":
        holder = f"the hibernated worktree of branch `{removed.holder_branch}`"
    return (f"`{removed.branch}` cannot be restored: {holder} holds its folder or its work now. "
            f"Remove that worktree first (`/worktree remove {removed.holder_branch}`), then restore again.")


def at_limit(codebase: str, active: int, limit: int) -> str:
    return (f"`{codebase}` has {active}/{limit} worktrees, so nothing can be restored now. "
            "Remove one (`/worktree remove <name>`, or `/worktree cleanup merged`), then restore again.")


def not_restorable(environment_id: str) -> str:
    return (f"Environment `{environment_id}` has no archive to restore: it was never removed, "
            "its archive was pruned, or it does not exist.")
