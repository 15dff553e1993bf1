"""GitHub end to end: signed webhook deliveries into the real app, workflows on real Temporal, git and
PostgreSQL, replies and PR lookups through the real PyGithub against a fake GitHub API."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
import uuid
from pathlib import Path
from typing import Any, AsyncIterator
from urllib.parse import urlencode

import httpx
import pytest
from pydantic import SecretStr
from temporalio.service import RPCError, RPCStatusCode

from isolator.contracts.message import Resolution, message_workflow_id
from isolator.settings import Settings
from tests.conftest import Stack
from tests.fakes.github_api import TOKEN, Comment, FakeGitHub
from tests.gitrepos import created_reply, worktree_paths
from workflows.message import MessageWorkflow

SECRET = "It's a Secret to Everybody"  # the example secret of GitHub's webhook validation documentation
REPO = "octo-org/hello-world"
URL = f"https://github.com/{REPO}"
SENDER = {"login": "octocat", "id": 1, "node_id": "MDQ6VXNlcjE=", "type": "User", "site_admin": False}
BOT = {"login": "isolator[bot]", "id": 2, "node_id": "BOT_kgDOB", "type": "Bot", "site_admin": False}


@pytest.fixture
async def fake() -> AsyncIterator[FakeGitHub]:
    fake = FakeGitHub()
    await fake.start()
    yield fake
    await fake.stop()


@pytest.fixture
def settings(settings: Settings, fake: FakeGitHub) -> Settings:
    return settings.model_copy(
        update={
            "github_webhook_secret": SecretStr(SECRET),
            "github_token": SecretStr(TOKEN),
            "github_api_url": fake.api_url,
        }
    )


# --- deliveries shaped like GitHub's documented webhook payloads ---------------------------------


def repository() -> dict[str, Any]:
    return {"id": 1296269, "node_id": "MDEwOlJlcG9zaXRvcnkxMjk2MjY5", "name": "hello-world", "full_name": REPO,
            "private": False, "owner": {"login": "octo-org", "id": 3, "type": "Organization"}, "html_url": URL,
            "url": f"https://api.github.com/repos/{REPO}", "clone_url": f"{URL}.git", "default_branch": "main"}


def issue(number: int, body: str | None, pull: bool = False) -> dict[str, Any]:
    data = {"url": f"https://api.github.com/repos/{REPO}/issues/{number}", "id": 10_000 + number, "number": number,
            "title": "Found a bug", "body": body, "user": SENDER, "state": "open", "html_url": f"{URL}/issues/{number}"}
    if pull:
        data["pull_request"] = {"url": f"https://api.github.com/repos/{REPO}/pulls/{number}"}
    return data


def issues_event(action: str, number: int, body: str | None = "", sender: dict[str, Any] = SENDER) -> dict[str, Any]:
    return {"action": action, "issue": issue(number, body), "repository": repository(), "sender": sender}


def comment_event(number: int, body: str, sender: dict[str, Any] = SENDER, pull: bool = False) -> dict[str, Any]:
    comment = {"id": 20_000 + number, "body": body, "user": sender, "html_url": f"{URL}/issues/{number}#issuecomment-1"}
    return {"action": "created", "issue": issue(number, "", pull), "comment": comment, "repository": repository(),
            "sender": sender}


def pull_request_event(action: str, number: int, body: str = "") -> dict[str, Any]:
    part = {"label": "octo-org:feature/x", "ref": "feature/x", "sha": "a" * 40, "repo": repository()}
    pull = {"url": f"https://api.github.com/repos/{REPO}/pulls/{number}", "number": number, "state": "closed",
            "body": body, "merged": True, "head": part, "base": {**part, "ref": "main", "sha": "b" * 40}}
    return {"action": action, "number": number, "pull_request": pull, "repository": repository(), "sender": SENDER}


def signed(body: bytes, secret: str = SECRET) -> dict[str, str]:
    return {"x-hub-signature-256": "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()}


async def deliver(
    stack: Stack, event: str, payload: dict[str, Any], delivery: str | None = None, **headers: str
) -> tuple[httpx.Response, str]:
    delivery = delivery or str(uuid.uuid4())
    body = json.dumps(payload).encode()
    sent = {"content-type": "application/json", "x-github-event": event, "x-github-delivery": delivery,
            "user-agent": "GitHub-Hookshot/044aadd", **signed(body), **headers}
    return await stack.api.post("/webhooks/github", content=body, headers=sent), delivery


async def resolution(stack: Stack, delivery: str) -> Resolution:
    handle = stack.temporal.get_workflow_handle_for(MessageWorkflow.run, message_workflow_id("github", delivery))
    return await handle.result()


async def started(stack: Stack, delivery: str) -> bool:
    try:
        await stack.temporal.get_workflow_handle(message_workflow_id("github", delivery)).describe()
    except RPCError as error:
        assert error.status == RPCStatusCode.NOT_FOUND
        return False
    return True


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
    assert fake.comments == [Comment(REPO, 42, created_reply("issue-42", repo))]

    response, again = await deliver(stack, "issue_comment", comment_event(42, "@isolator and the logout too"))
    assert response.status_code == 202, response.text
    assert (await resolution(stack, again)).outcome == "reused"
    assert len(fake.comments) == 1, "reuse is silent"
    assert await stack.db.fetchval("SELECT count(*) FROM conversations") == 1


async def test_a_redelivery_is_answered_once(stack: Stack, fake: FakeGitHub, repo: Path) -> None:
    await stack.register(repo, url=URL)
    fake.add_issue(REPO, 7)
    payload = issues_event("opened", 7, "Hey @isolator, please look")
    response, delivery = await deliver(stack, "issues", payload)
    assert response.status_code == 202
    assert (await resolution(stack, delivery)).outcome == "created"
    response, _ = await deliver(stack, "issues", payload, delivery=delivery)  # "Redeliver" in GitHub's UI
    assert response.status_code == 202
    assert (await resolution(stack, delivery)).outcome == "created"
    assert fake.comments == [Comment(REPO, 7, created_reply("issue-7", repo))]


async def test_closing_an_issue_or_a_pull_request_starts_a_close(stack: Stack, fake: FakeGitHub, repo: Path) -> None:
    await stack.register(repo, url=URL)
    for event, payload in [("issues", issues_event("closed", 3)), ("pull_request", pull_request_event("closed", 4))]:
        response, delivery = await deliver(stack, event, payload)
        assert response.status_code == 202, response.text
        assert await started(stack, delivery)
        assert (await resolution(stack, delivery)).outcome == "closed"

    # GitHub's default content type sends the same JSON as the form field `payload`.
    body = urlencode({"payload": json.dumps(issues_event("closed", 5))}).encode()
    headers = {"content-type": "application/x-www-form-urlencoded", "x-github-event": "issues",
               "x-github-delivery": str(uuid.uuid4()), **signed(body)}
    response = await stack.api.post("/webhooks/github", content=body, headers=headers)
    assert response.status_code == 202, response.text
    assert (await resolution(stack, headers["x-github-delivery"])).outcome == "closed"
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
