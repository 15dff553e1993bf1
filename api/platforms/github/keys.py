"""The key of a GitHub event: what makes it one event, whichever delivery brings it.

`X-GitHub-Delivery` is not covered by the signature: a body posted again under a new delivery id must
still be the same event. So a message's workflow, and an answer's record (seen_presses.py), are named by
the ids in the signed body itself (docs/platforms.md#redeliveries); GitHub's are unique across
repositories. The pull-request loop's events are keyed by theirs already (github_feedback.py).
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from api.platforms.github.events import PayloadError, object_at

# What each handled event is about: the object whose id names it.
_SUBJECTS = {"issues": "issue", "issue_comment": "comment", "pull_request": "pull_request",
             "pull_request_review_comment": "comment"}
# Actions that happen once to their object. Any other can happen again (an issue closed, reopened and
# closed again), so when the object last changed is part of its key.
_ONCE = frozenset({"opened", "created"})
# A timestamp as GitHub writes one (`2011-04-14T16:00:49Z`): it becomes part of a workflow id.
_TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]{1,20}(Z|[+-][0-9:]{1,8})")


def event_key(event: str, payload: Mapping[str, Any]) -> str:
    """`issue_comment:created:1234`, `issues:closed:42:2011-04-14T16:00:49Z`, for an event parse_event
    or parse_answer takes; PayloadError when the body lacks what GitHub always sends."""
    subject = _SUBJECTS[event]
    body = object_at(payload, subject)
    object_id = body.get("id")
    if isinstance(object_id, bool) or not isinstance(object_id, int):
        raise PayloadError(f"`{subject}.id` is missing or not an integer")
    action = payload.get("action")
    key = f"{event}:{action}:{object_id}"
    if action in _ONCE:
        return key
    updated_at = body.get("updated_at")
    if not isinstance(updated_at, str) or not _TIMESTAMP.fullmatch(updated_at):
        raise PayloadError(f"`{subject}.updated_at` is missing or not a timestamp")
    return f"{key}:{updated_at}"
