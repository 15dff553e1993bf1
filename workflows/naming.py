"""Branch names for each kind of work (ARCHITECTURE.md, Naming)."""

from __future__ import annotations

import hashlib
import re

# Letters, digits, `.`, `_`, `-`; starting with a letter or digit. The branch is also checked by git.
_TASK_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,49}$")


def thread_identity(platform: str, conversation_id: str) -> str:
    """What a thread's work is known by: its platform and its conversation, so that the same id on two
    platforms is two pieces of work, with two worktrees on two branches."""
    return f"{platform}:{conversation_id}"


def thread_branch(identity: str) -> str:
    """`thread-` and the first 8 hex digits of sha256(the thread's identity, `platform:conversation id`)."""
    return "thread-" + hashlib.sha256(identity.encode()).hexdigest()[:8]


def branch_for(workflow_type: str, workflow_id: str) -> str:
    if workflow_type == "thread":
        return thread_branch(workflow_id)
    if workflow_type == "issue":
        return f"issue-{workflow_id}"
    if workflow_type == "review":
        return f"review-{workflow_id}"
    raise ValueError(f"no default branch name for workflow type {workflow_type!r}")


def task_slug(name: str) -> str | None:
    """The identity of `/worktree create <name>` (its branch is `task-<slug>`); None if the name is not allowed."""
    if not _TASK_NAME.match(name) or ".." in name or name.endswith((".", ".lock")):
        return None
    return name.lower()
