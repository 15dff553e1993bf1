"""GitHub end to end: signed webhook deliveries into the real app, workflows on real Temporal, git and
PostgreSQL, replies and PR lookups through the real PyGithub against a fake GitHub API."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import uuid
from pathlib import Path
from urllib.parse import urlencode

from tests.conftest import Stack
from tests.fakes.github_api import Comment, FakeGitHub
from tests.gitrepos import first_replies, worktree_paths
from tests.platforms.github import (
    BOT,
    REPO,
    SECRET,
    SENDER,
    URL,
    comment_event,
    deliver,
    issues_event,
    message_key,
    pull_request_event,
    repository,
    resolution,
    signed,
    started,
)

# --- deliveries shaped like GitHub's documented webhook payloads ---------------------------------


# --- the flow ------------------------------------------------------------------------------------


async def test_an_issue_mentioning_the_bot_gets_a_worktree_and_a_comment_then_reuses_it_silently(
    stack: Stack, fake: FakeGitHub, repo: Path
) -> None:
    codebase = await stack.register(repo, url=URL)
    fake.add_issue(REPO, 42)

    began = time.monotonic()
    response, delivery = await deliver(stack, "issues", issues_event("opened", 42, "@isolator the login fails"))
    assert response.status_code == 202, response.text
    assert time.monotonic() - began < 10, "GitHub gives up on a delivery after 10 s"
    assert response.json()["workflow_id"] == f"message:github:{delivery}"

    result = await resolution(stack, delivery)
    path = stack.settings.worktree_base.resolve() / codebase["name"] / "issue-42"
    assert (result.outcome, result.branch, result.working_path) == ("created", "issue-42", str(path))
    assert (path / "file0.txt").is_file()
    assert worktree_paths(repo) == [str(path)]
    rows = await stack.db.fetch(
        "SELECT workflow_type, workflow_id, branch_name FROM isolation_environments WHERE status = 'active'"
    )
    assert [tuple(row) for row in rows] == [("issue", "42", "issue-42")]
    # No agent is configured: the issue is told so at once, in a second comment after the worktree's.
    assert fake.comments == [Comment(REPO, 42, text) for text in first_replies("issue-42", repo)]

    response, again = await deliver(stack, "issue_comment", comment_event(42, "@isolator and the logout too"))
    assert response.status_code == 202, response.text
    assert (await resolution(stack, again)).outcome == "reused"
    assert len(fake.comments) == 2, "reuse is silent: that no agent answers was said once, on the first message"
    assert await stack.db.fetchval("SELECT count(*) FROM conversations") == 1


async def test_a_redelivery_is_answered_once(stack: Stack, fake: FakeGitHub, repo: Path) -> None:
    await stack.register(repo, url=URL)
    fake.add_issue(REPO, 7)
    payload = issues_event("opened", 7, "Hey @isolator, please look")
    delivery = str(uuid.uuid4())
    response, key = await deliver(stack, "issues", payload, delivery=delivery)
    assert response.status_code == 202
    assert (await resolution(stack, key)).outcome == "created"
    response, _ = await deliver(stack, "issues", payload, delivery=delivery)  # "Redeliver" in GitHub's UI
    assert response.status_code == 202
    assert (await resolution(stack, key)).outcome == "created"
    assert fake.comments == [Comment(REPO, 7, text) for text in first_replies("issue-7", repo)]


async def test_closing_an_issue_or_a_pull_request_starts_a_close(stack: Stack, fake: FakeGitHub, repo: Path) -> None:
    await stack.register(repo, url=URL)
    for event, payload in [("issues", issues_event("closed", 3)), ("pull_request", pull_request_event("closed", 4))]:
        response, delivery = await deliver(stack, event, payload)
        assert response.status_code == 202, response.text
        assert await started(stack, delivery)
        assert (await resolution(stack, delivery)).outcome == "closed"

    # GitHub's default content type sends the same JSON as the form field `payload`.
    closed = issues_event("closed", 5)
    body = urlencode({"payload": json.dumps(closed)}).encode()
    headers = {"content-type": "application/x-www-form-urlencoded", "x-github-event": "issues",
               "x-github-delivery": str(uuid.uuid4()), **signed(body)}
    response = await stack.api.post("/webhooks/github", content=body, headers=headers)
    assert response.status_code == 202, response.text
    assert (await resolution(stack, message_key("issues", closed, ""))).outcome == "closed"
    assert fake.comments == []


# --- refusals and what is ignored ----------------------------------------------------------------


async def test_unsigned_badly_signed_and_oversized_deliveries_start_nothing(
    stack: Stack, fake: FakeGitHub, repo: Path
) -> None:
    await stack.register(repo, url=URL)
    fake.add_issue(REPO, 9)
    payload = issues_event("opened", 9, "@isolator go")
    body = json.dumps(payload).encode()
    attempts = {
        "unsigned": {},
        "signed with another secret": signed(body, secret="not-the-secret"),
        "signature of another body": signed(body + b" "),
        "sha1 scheme": {"x-hub-signature-256": "sha1=" + hmac.new(SECRET.encode(), body, hashlib.sha1).hexdigest()},
        "bare digest": {"x-hub-signature-256": signed(body)["x-hub-signature-256"].removeprefix("sha256=")},
    }
    deliveries = []
    for name, signature in attempts.items():
        delivery = str(uuid.uuid4())
        deliveries.append(delivery)
        headers = {"content-type": "application/json", "x-github-event": "issues", "x-github-delivery": delivery}
        response = await stack.api.post("/webhooks/github", content=body, headers={**headers, **signature})
        assert response.status_code == 401, name
        assert "X-Hub-Signature-256" in response.json()["detail"], name

    huge = issues_event("opened", 9, "@isolator " + "x" * (1024 * 1024))
    response, delivery = await deliver(stack, "issues", huge)
    assert response.status_code == 413
    deliveries.append(delivery)

    for delivery in deliveries:
        assert not await started(stack, delivery)
    assert await stack.db.fetchval("SELECT count(*) FROM conversations") == 0
    assert fake.server.requests == []


async def test_unreadable_deliveries_are_refused_with_a_reason(stack: Stack) -> None:
    cases: list[tuple[bytes, dict[str, str], str]] = [
        (b"{not json", {}, "not valid JSON"),
        (b"[1, 2]", {}, "JSON object"),
        (json.dumps({**issues_event("opened", 1, "@isolator"), "repository": None}).encode(), {}, "`repository`"),
        (json.dumps(issues_event("opened", 1, "@isolator") | {"issue": {"number": "1"}}).encode(), {}, "issue.number"),
        (b"{}", {"x-github-event": ""}, "X-GitHub-Event"),
        (b"{}", {"x-github-delivery": ""}, "X-GitHub-Delivery"),
    ]
    for body, overrides, reason in cases:
        headers = {"content-type": "application/json", "x-github-event": "issues",
                   "x-github-delivery": str(uuid.uuid4()), **signed(body), **overrides}
        response = await stack.api.post("/webhooks/github", content=body, headers=headers)
        assert response.status_code == 400, (reason, response.text)
        assert reason in response.json()["detail"]
    assert await stack.db.fetchval("SELECT count(*) FROM conversations") == 0


async def test_no_mention_bots_and_unhandled_events_are_acknowledged_and_ignored(
    stack: Stack, fake: FakeGitHub, repo: Path
) -> None:
    await stack.register(repo, url=URL)
    ignored = [
        ("issues", issues_event("opened", 11, "no one is mentioned here")),
        ("issues", issues_event("opened", 12, None)),  # an issue without a description
        ("issues", issues_event("opened", 13, "mail me at someone@isolator.dev")),
        ("issue_comment", comment_event(14, "@isolator Working in isolated branch `issue-14`", sender=BOT)),
        ("issues", issues_event("edited", 15, "@isolator")),
        ("pull_request", pull_request_event("synchronize", 16, "@isolator")),
        ("push", {"ref": "refs/heads/main", "repository": repository(), "sender": SENDER}),
        ("ping", {"zen": "Keep it logically awesome.", "hook_id": 1, "repository": repository(), "sender": SENDER}),
    ]
    for event, payload in ignored:
        response, delivery = await deliver(stack, event, payload)
        assert response.status_code == 200, (event, response.text)
        assert response.json()["status"] == "ignored"
        assert not await started(stack, delivery), event
    assert await stack.db.fetchval("SELECT count(*) FROM conversations") == 0
    assert fake.server.requests == []
