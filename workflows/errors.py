"""Telling a user's mistake (shown to them) from a fault (raised, retried, visible in the UI)."""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, ChildWorkflowError

with workflow.unsafe.imports_passed_through():
    from activities.contracts import USER_ERRORS


def user_error(error: Exception) -> str:
    """The reason to show the user, or re-raise: only known user errors end the message quietly."""
    cause = error.cause if isinstance(error, (ActivityError, ChildWorkflowError)) else None
    if isinstance(cause, ApplicationError) and cause.type in USER_ERRORS:
        return cause.message
    raise error
