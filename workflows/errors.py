"""Telling a user's mistake (shown to them) from a fault (raised, retried, visible in the UI)."""

from __future__ import annotations

from typing import TypeVar

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, ChildWorkflowError

with workflow.unsafe.imports_passed_through():
    from isolator.contracts.errors import USER_ERRORS


# What a failed step raises: activities and child workflows wrap their error; a local activity's
# arrives in the workflow as it was raised.
STEP_FAILURES = (ActivityError, ChildWorkflowError, ApplicationError)


def failure_cause(error: BaseException) -> BaseException | None:
    return error.cause if isinstance(error, (ActivityError, ChildWorkflowError)) else error


def user_error(error: Exception) -> str:
    """The reason to show the user, or re-raise: only known user errors end the message quietly."""
    cause = failure_cause(error)
    if isinstance(cause, ApplicationError) and cause.type in USER_ERRORS:
        return cause.message
    raise error


T = TypeVar("T")


def result_or_raise(result: T | BaseException) -> T:
    """A step's result gathered with `return_exceptions`: its failure raised here, where it is needed."""
    if isinstance(result, BaseException):
        raise result
    return result
