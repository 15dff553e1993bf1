"""Reading GitHub deliveries without I/O: signatures, mentions, conversation ids and hints."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

import pytest
from temporalio.exceptions import ApplicationError

from activities.chat.platforms.github import split_conversation_id
from api.platforms.github.webhook import signature_matches
from api.platforms.github.events import (
    GitHubMessage,
    Ignored,
    PayloadError,
    decode_payload,
    mentions,
    parse_event,
)

REPO = "octo-org/hello-world"
URL = f"https://github.com/{REPO}"
USER = {"login": "octocat", "type": "User"}


def repository(full_name: str = REPO) -> dict[str, Any]:
    return {"full_name": full_name, "html_url": f"https://github.com/{full_name}",
            "clone_url": f"https://github.com/{full_name}.git"}


def pull(number: int, head_repo: dict[str, Any] | None) -> dict[str, Any]:
    return {"number": number, "body": "@isolator review please",
            "head": {"ref": "feature/x", "sha": "a" * 40, "repo": head_repo},
            "base": {"ref": "main", "sha": "b" * 40, "repo": repository()}}


def parsed(event: str, payload: dict[str, Any]) -> GitHubMessage:
    result = parse_event(event, {"repository": repository(), "sender": USER, **payload}, "@isolator")
    assert isinstance(result, GitHubMessage), result
    return result


def test_the_signature_is_githubs_documented_example() -> None:
    # https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries#testing-the-webhook-payload-validation
    secret, body = b"It's a Secret to Everybody", b"Hello, World!"
    good = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
    assert signature_matches(secret, body, good)
    assert not signature_matches(secret, body, good.upper())
    assert not signature_matches(secret, body + b"\n", good)
    assert not signature_matches(b"another secret", body, good)
    assert not signature_matches(secret, body, None)
    assert not signature_matches(secret, body, "")
    assert not signature_matches(secret, body, "sha256=ü")  # non-ASCII is compared, not a crash


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("@isolator please fix", True),
        ("please fix, @Isolator.", True),
        ("(@isolator)", True),
        ("@isolator-dev please", False),
        ("@isolators", False),
        ("someone@isolator.dev", False),
        ("isolator please", False),
        ("", False),
    ],
)
def test_a_mention_is_the_whole_name(text: str, expected: bool) -> None:
    assert mentions(text, "@isolator") is expected


def test_an_opened_issue_is_an_issue_conversation() -> None:
    message = parsed("issues", {"action": "opened", "issue": {"number": 42, "body": "@isolator the login fails"}})
    assert (message.conversation_id, message.text, message.kind) == (f"{REPO}#42", "@isolator the login fails", "message")
    hints = message.hints
    assert (hints.workflow_type, hints.workflow_id) == ("issue", "42")
    assert (hints.repository_url, hints.clone_url) == (URL, f"{URL}.git")
    assert not hints.needs_completion and hints.pr_head_branch is None


def test_a_comment_on_a_pr_is_a_pr_whose_head_is_completed_later() -> None:
    issue = {"number": 99, "body": None, "pull_request": {"url": f"https://api.github.com/repos/{REPO}/pulls/99"}}
    message = parsed("issue_comment", {"action": "created", "issue": issue, "comment": {"body": "@isolator /status"}})
    assert (message.conversation_id, message.text) == (f"{REPO}#99", "@isolator /status")
    assert (message.hints.workflow_type, message.hints.workflow_id, message.hints.needs_completion) == ("pr", "99", True)
    assert message.hints.pr_head_branch is None

    on_issue = parsed("issue_comment", {"action": "created", "issue": {"number": 5}, "comment": {"body": "@isolator hi"}})
    assert (on_issue.hints.workflow_type, on_issue.hints.needs_completion) == ("issue", False)


@pytest.mark.parametrize(
    ("head_repo", "is_fork"),
    [(repository(), False), (repository("contributor/hello-world"), True), (None, True)],
)
def test_pull_request_events_carry_the_head(head_repo: dict[str, Any] | None, is_fork: bool) -> None:
    opened = parsed("pull_request", {"action": "opened", "number": 7, "pull_request": pull(7, head_repo)})
    review = parsed("pull_request_review_comment", {"action": "created", "pull_request": pull(7, head_repo),
                                                    "comment": {"body": "@isolator here"}})
    assert opened.text == "@isolator review please" and review.text == "@isolator here"
    for message in (opened, review):
        hints = message.hints
        assert message.conversation_id == f"{REPO}#7"
        assert (hints.workflow_type, hints.workflow_id, hints.needs_completion) == ("pr", "7", True)
        assert (hints.pr_head_branch, hints.pr_head_sha, hints.pr_is_fork) == ("feature/x", "a" * 40, is_fork)


def test_closing_needs_no_mention_and_counts_whoever_closed() -> None:
    closed = parse_event("issues", {"action": "closed", "issue": {"number": 3, "body": "no mention"},
                                    "repository": repository(), "sender": {"login": "stale[bot]", "type": "Bot"}},
                         "@isolator")
    assert isinstance(closed, GitHubMessage)
    assert (closed.kind, closed.text, closed.conversation_id) == ("closed", "", f"{REPO}#3")
    merged = parsed("pull_request", {"action": "closed", "number": 4, "pull_request": pull(4, repository())})
    assert (merged.kind, merged.hints.workflow_type) == ("closed", "pr")


@pytest.mark.parametrize(
    ("event", "payload", "reason"),
    [
        ("issues", {"action": "opened", "issue": {"number": 1, "body": "hello"}}, "does not mention"),
        ("issue_comment", {"action": "created", "issue": {"number": 1}, "comment": {"body": "@isolator"},
                           "sender": {"login": "isolator[bot]", "type": "Bot"}}, "this service"),
        ("issue_comment", {"action": "deleted", "issue": {"number": 1}, "comment": {"body": "@isolator"}}, "deleted"),
        ("push", {"ref": "refs/heads/main"}, "push"),
        ("issues", {"action": ["opened"]}, "not handled"),
    ],
)
def test_what_is_ignored_says_why(event: str, payload: dict[str, Any], reason: str) -> None:
    result = parse_event(event, {"repository": repository(), "sender": USER, **payload}, "@isolator")
    assert isinstance(result, Ignored) and reason in result.reason


@pytest.mark.parametrize(
    ("event", "payload", "field"),
    [
        ("issues", {"action": "opened", "issue": {"number": 1}, "repository": None}, "`repository`"),
        ("issues", {"action": "opened", "issue": {"number": 1}, "repository": {"full_name": REPO}}, "repository.html_url"),
        ("issues", {"action": "opened", "issue": {"number": 1},
                    "repository": {**repository(), "full_name": "a/b#1"}}, "repository.full_name"),
        ("issues", {"action": "opened", "issue": {"number": True}}, "issue.number"),
        ("issues", {"action": "closed", "issue": {"number": 0}}, "issue.number"),
        ("issues", {"action": "opened", "issue": {"number": 1, "body": 5}}, "issue.body"),
        ("issue_comment", {"action": "created", "issue": {"number": 1}}, "`comment`"),
        ("pull_request", {"action": "opened", "pull_request": {"number": 2, "head": {"ref": "x", "sha": "y"}}},
         "pull_request.base"),
        ("pull_request", {"action": "opened", "pull_request": {**pull(2, None), "head": {"sha": "y"}}},
         "pull_request.head.ref"),
    ],
)
def test_a_handled_event_missing_a_field_is_refused_with_its_name(event: str, payload: dict[str, Any], field: str) -> None:
    with pytest.raises(PayloadError, match=field.replace(".", r"\.")):
        parse_event(event, {"repository": repository(), "sender": USER, **payload}, "@isolator")


def test_payloads_arrive_as_json_or_as_a_form_field() -> None:
    payload = {"action": "opened", "zen": "a & b = c"}
    assert decode_payload(json.dumps(payload).encode(), "application/json") == payload
    form = urlencode({"payload": json.dumps(payload)}).encode()
    assert decode_payload(form, "application/x-www-form-urlencoded; charset=utf-8") == payload
    for body, content_type in [
        (b"{", "application/json"),
        (b"null", "application/json"),
        (b"\xff", "application/json"),
        (b"other=1", "application/x-www-form-urlencoded"),
        (b"payload=%7B", "application/x-www-form-urlencoded"),
        (b"\xff=1", "application/x-www-form-urlencoded"),
    ]:
        with pytest.raises(PayloadError):
            decode_payload(body, content_type)


def test_conversation_ids_split_back_into_repository_and_number() -> None:
    assert split_conversation_id(f"{REPO}#42") == (REPO, 42)
    for broken in ("octo-org/hello-world", "hello-world#4", f"{REPO}#x", ""):
        with pytest.raises(ApplicationError) as raised:
            split_conversation_id(broken)
        assert raised.value.non_retryable
