"""Branch names for each kind of work (ARCHITECTURE.md, Naming)."""

from __future__ import annotations

import hashlib


def thread_branch(conversation_id: str) -> str:
    """`thread-` and the first 8 hex digits of sha256(conversation id)."""
    return "thread-" + hashlib.sha256(conversation_id.encode()).hexdigest()[:8]


def branch_for(workflow_type: str, workflow_id: str) -> str:
    if workflow_type == "thread":
        return thread_branch(workflow_id)
    if workflow_type == "issue":
        return f"issue-{workflow_id}"
    if workflow_type == "review":
        return f"review-{workflow_id}"
    raise ValueError(f"no default branch name for workflow type {workflow_type!r}")
