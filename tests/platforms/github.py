"""GitHub in the tests: the fake GitHub API fixture, settings that point at it, and deliveries shaped like GitHub's documented webhook payloads."""

from __future__ import annotations

import hashlib
import hmac
import json
import uuid
from typing import Any, AsyncIterator

import httpx
import pytest
from pydantic import SecretStr
from temporalio.service import RPCError, RPCStatusCode

from isolator.contracts.message import Resolution, message_workflow_id
from isolator.settings import Settings
from tests.conftest import Stack
from tests.fakes.github_api import TOKEN, FakeGitHub
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


def repository() -> dict[str, Any]:
    return {"id": 1296269, "node_id": "MDEwOlJlcG9zaXRvcnkxMjk2MjY5", "name": "hello-world", "full_name": REPO,
            "private": False, "owner": {"login": "octo-org", "id": 3, "type": "Organization"}, "html_url": URL,
            "url": f"https://api.github.com/repos/{REPO}", "clone_url": f"{URL}.git", "default_branch": "main"}


def issue(number: int, body: str | None, pull: bool = False, association: str = "OWNER") -> dict[str, Any]:
    data = {"url": f"https://api.github.com/repos/{REPO}/issues/{number}", "id": 10_000 + number, "number": number,
            "title": "Found a bug", "body": body, "user": SENDER, "state": "open", "html_url": f"{URL}/issues/{number}",
            "author_association": association}
    if pull:
        data["pull_request"] = {"url": f"https://api.github.com/repos/{REPO}/pulls/{number}"}
    return data


def issues_event(action: str, number: int, body: str | None = "", sender: dict[str, Any] = SENDER) -> dict[str, Any]:
    return {"action": action, "issue": issue(number, body), "repository": repository(), "sender": sender}


def comment_event(number: int, body: str, sender: dict[str, Any] = SENDER, pull: bool = False,
                  association: str = "MEMBER") -> dict[str, Any]:
    """A comment; `association` is the commenter's `author_association` (OWNER, MEMBER, ..., NONE)."""
    comment = {"id": 20_000 + number, "body": body, "user": sender, "html_url": f"{URL}/issues/{number}#issuecomment-1",
               "author_association": association}
    return {"action": "created", "issue": issue(number, "", pull), "comment": comment, "repository": repository(),
            "sender": sender}


def pull_request_event(action: str, number: int, body: str = "") -> dict[str, Any]:
    part = {"label": "octo-org:feature/x", "ref": "feature/x", "sha": "a" * 40, "repo": repository()}
    pull = {"url": f"https://api.github.com/repos/{REPO}/pulls/{number}", "number": number, "state": "closed",
            "body": body, "merged": True, "head": part, "base": {**part, "ref": "main", "sha": "b" * 40},
            "author_association": "COLLABORATOR"}
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
