"""Which events fire which automation, and the fields a firing's prompt may use (`{{ event.title }}`).

Pure: a platform's payload, as its webhook verified it, in; a yes or no, and plain fields, out.
"""

from __future__ import annotations

import re
from typing import Any

from isolator.contracts.automation import EventTrigger

MAX_FIELD = 20000


def _text(value: Any) -> str:
    return value[:MAX_FIELD] if isinstance(value, str) else ""


def _object(payload: dict[str, Any], key: str) -> dict[str, Any]:
    value = payload.get(key)
    return value if isinstance(value, dict) else {}


def _failed_on(payload: dict[str, Any], key: str, branch: str) -> bool:
    run = _object(payload, key)
    return payload.get("action") == "completed" and run.get("conclusion") in ("failure", "timed_out") and \
        (not branch or run.get("head_branch") == branch)


def matches_github(trigger: EventTrigger, event: str, payload: dict[str, Any]) -> bool:
    if trigger.platform != "github":
        return False
    action = payload.get("action")
    kind, _, wanted_action = trigger.event.partition(".")
    if kind == "push":  # a branch's new commits: a tag, or a branch deleted, is no push to work on
        ref = payload.get("ref")
        return event == "push" and payload.get("deleted") is not True and isinstance(ref, str) and \
            ref.startswith("refs/heads/") and (not trigger.argument or ref == f"refs/heads/{trigger.argument}")
    if kind in ("check_suite", "workflow_run") and wanted_action == "failed":
        return event == kind and _failed_on(payload, kind, trigger.argument)
    if event != kind or action != wanted_action:
        return False
    if trigger.event == "issues.labeled":
        return not trigger.argument or _object(payload, "label").get("name") == trigger.argument
    return True


def github_event_fields(event: str, payload: dict[str, Any]) -> dict[str, str]:
    """`title`, `body`, `url`, `number`, `branch`, `label`, `sender`, `kind`, `action`, and the issue or PR
    it is about as `conversation` (`owner/repo#n`, where `github:origin` reports)."""
    repository = _text(_object(payload, "repository").get("full_name"))
    subject = _object(payload, "issue") or _object(payload, "pull_request")
    run = _object(payload, "check_suite") or _object(payload, "workflow_run")
    release = _object(payload, "release")
    number = subject.get("number")
    fields = {
        "kind": event, "action": _text(payload.get("action")), "repository": repository,
        "sender": _text(_object(payload, "sender").get("login")),
        # A release's name may be empty (its tag names it); a check suite's title is its commit's message.
        "title": _text(subject.get("title") or release.get("name") or release.get("tag_name")
                       or run.get("display_title") or _object(run, "head_commit").get("message")
                       or _object(payload, "head_commit").get("message")),
        "body": _text(subject.get("body") or release.get("body")),
        "url": _text(subject.get("html_url") or release.get("html_url") or run.get("html_url")
                     or payload.get("compare")),
        "number": str(number) if isinstance(number, int) else "",
        "label": _text(_object(payload, "label").get("name")),
        "branch": _text(run.get("head_branch")) or re.sub(r"^refs/heads/", "", _text(payload.get("ref"))),
        "conclusion": _text(run.get("conclusion")),
    }
    fields["conversation"] = f"{repository}#{number}" if repository and isinstance(number, int) else ""
    return fields


def matches_slack(trigger: EventTrigger, channel_id: str, channel_name: str | None, text: str) -> bool:
    """`slack:message:#alerts[:pattern]`: a message in that channel (by name or id) whose text matches."""
    if trigger.platform != "slack" or trigger.event != "message":
        return False
    channel, _, pattern = trigger.argument.partition(":")
    named = channel.removeprefix("#")
    if named not in (channel_id, channel_name or ""):
        return False
    return not pattern or re.search(pattern, text) is not None
