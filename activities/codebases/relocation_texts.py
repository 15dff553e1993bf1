"""What a conversation is told, once, when its worktree's host lost its disk or its codebase moved."""

from __future__ import annotations


def recreated(host: str, branch: str, from_archive: bool) -> str:
    if from_archive:
        return (f"The disk of {host}, which held your worktree `{branch}`, was lost. It was put back from its "
                "archive at origin, as it was when last archived (after the last agent run).")
    return (f"The disk of {host}, which held your worktree `{branch}`, was lost. It was put back from `{branch}` "
            "as pushed to origin: changes that were never committed and pushed are gone.")


def lost_with_disk(host: str, branch: str, why: str) -> str:
    return (f"The disk of {host}, which held your worktree `{branch}`, was lost, and nothing of it could be put "
            f"back ({why}): its work is gone. Your next message starts a new worktree.")


def moved(name: str, old_host: str, new_host: str, branch: str, placed: str) -> str:
    how = {
        "archive": "with its uncommitted and untracked files",
        "branch": "as its branch was pushed to origin (changes that were never committed and pushed stayed behind)",
        "already": "as it was",
    }.get(placed, "")
    return f"`{name}` moved from {old_host} to {new_host}: your worktree `{branch}` is there now, {how}."


def lost_in_move(name: str, old_host: str, new_host: str, branch: str, why: str) -> str:
    return (f"`{name}` moved from {old_host} to {new_host}, but your worktree `{branch}` could not come with it "
            f"({why}). Your next message starts a new worktree there.")
