"""GitHub in the tests: the fake GitHub API fixture, settings that point at it, and deliveries shaped like GitHub's documented webhook payloads."""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import re
import uuid
import zlib
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, AsyncIterator

import httpx
import pytest
from pydantic import SecretStr
from temporalio.service import RPCError, RPCStatusCode

from api.platforms.github.events import PayloadError
from api.platforms.github.keys import event_key
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


# An event's ids name its workflow (api/platforms/github/keys.py), and the Temporal server is shared by the
# whole session: every issue, PR and comment built here has an id of its own, as on GitHub.
_ids = itertools.count(uuid.uuid4().int % 10**9 * 1000)


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


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
    data = {"url": f"https://api.github.com/repos/{REPO}/issues/{number}", "id": next(_ids), "number": number,
            "title": "Found a bug", "body": body, "user": SENDER, "state": "open", "html_url": f"{URL}/issues/{number}",
            "author_association": association, "updated_at": _now()}
    if pull:
        data["pull_request"] = {"url": f"https://api.github.com/repos/{REPO}/pulls/{number}"}
    return data


def issues_event(action: str, number: int, body: str | None = "", sender: dict[str, Any] = SENDER) -> dict[str, Any]:
    return {"action": action, "issue": issue(number, body), "repository": repository(), "sender": sender}


def comment_event(number: int, body: str, sender: dict[str, Any] = SENDER, pull: bool = False,
                  association: str = "MEMBER") -> dict[str, Any]:
    """A comment; `association` is the commenter's `author_association` (OWNER, MEMBER, ..., NONE)."""
    comment = {"id": next(_ids), "body": body, "user": sender, "html_url": f"{URL}/issues/{number}#issuecomment-1",
               "author_association": association}
    return {"action": "created", "issue": issue(number, "", pull), "comment": comment, "repository": repository(),
            "sender": sender}


def pull_request_event(action: str, number: int, body: str = "") -> dict[str, Any]:
    part = {"label": "octo-org:feature/x", "ref": "feature/x", "sha": "a" * 40, "repo": repository()}
    pull = {"url": f"https://api.github.com/repos/{REPO}/pulls/{number}", "id": next(_ids), "number": number,
            "state": "closed", "body": body, "merged": True, "head": part, "base": {**part, "ref": "main", "sha": "b" * 40},
            "author_association": "COLLABORATOR", "updated_at": _now()}
    return {"action": action, "number": number, "pull_request": pull, "repository": repository(), "sender": SENDER}


def signed(body: bytes, secret: str = SECRET) -> dict[str, str]:
    return {"x-hub-signature-256": "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()}


async def deliver(
    stack: Stack, event: str, payload: dict[str, Any], delivery: str | None = None, **headers: str
) -> tuple[httpx.Response, str]:
    """Post the signed event under `delivery` (a new delivery id by default); returns the answer and the key
    of the message it starts, for `resolution` and `started`."""
    delivery = delivery or str(uuid.uuid4())
    body = json.dumps(payload).encode()
    sent = {"content-type": "application/json", "x-github-event": event, "x-github-delivery": delivery,
            "user-agent": "GitHub-Hookshot/044aadd", **signed(body), **headers}
    return await stack.api.post("/webhooks/github", content=body, headers=sent), message_key(event, payload, delivery)


def message_key(event: str, payload: dict[str, Any], delivery: str) -> str:
    """The event's own key, as the webhook makes it; an event no message is made of (a push, a ping, a payload
    without its ids) has none, and its delivery id, which names no workflow, stands in for it."""
    try:
        return event_key(event, payload)
    except (KeyError, PayloadError):
        return delivery


async def resolution(stack: Stack, key: str) -> Resolution:
    handle = stack.temporal.get_workflow_handle_for(MessageWorkflow.run, message_workflow_id("github", key))
    return await handle.result()


async def started(stack: Stack, key: str) -> bool:
    try:
        await stack.temporal.get_workflow_handle(message_workflow_id("github", key)).describe()
    except RPCError as error:
        assert error.status == RPCStatusCode.NOT_FOUND
        return False
    return True


def person(login: str) -> dict[str, Any]:
    """A person on GitHub, as a payload's `sender` shows them."""
    return {"login": login, "id": zlib.crc32(login.encode()) % 10**7, "node_id": f"U_{login}", "type": "User",
            "site_admin": False}


async def comment(stack: Stack, fake: FakeGitHub, number: int, body: str, login: str = "octocat",
                  association: str = "MEMBER") -> httpx.Response:
    """A person comments on issue or PR `number` (one the fake knows): the comment is kept by the fake (a
    reaction can reach it), then its signed `issue_comment` delivery is sent. An answer to a request is
    `/approve <code>`, `/deny <code> [reason]`, `/answer <code> <n or words>`, ... (request_comment lists them)."""
    kept = fake.add_comment(REPO, number, body, login)
    payload = comment_event(number, body, sender=person(login), pull=fake.is_pull(REPO, number),
                            association=association)
    payload["comment"]["id"] = kept["id"]
    response, _ = await deliver(stack, "issue_comment", payload)
    return response


@dataclass
class RequestComment:
    """A request of the agent's as the service commented it: its text and the comments that answer it."""

    number: int
    body: str
    code: str
    commands: dict[str, str]  # each answer's label: its command, e.g. "Allow once": "/approve K7P2QX"


_COMMAND_LINE = re.compile(r"^- `(/\w+ ([A-Z0-9]{4,16})[^`]*)`: (.+)$", re.MULTILINE)


def request_comment(fake: FakeGitHub) -> RequestComment:
    """The last comment the service posted that lists the comments answering a request."""
    for posted in reversed(fake.comments):
        lines = _COMMAND_LINE.findall(posted.body)
        if "Answer with a comment:" in posted.body and lines:
            return RequestComment(posted.number, posted.body, lines[0][1],
                                  {label: command for command, _, label in lines})
    raise AssertionError(f"no request among the comments posted: {fake.comments}")
