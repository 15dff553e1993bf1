"""Requests without the right credentials are refused (401), start nothing, and are logged without any
secret: neither the configured ones nor what the caller sent appears in a log record or an answer."""

from __future__ import annotations

import json
import logging
import time
import uuid

import httpx
import pytest
from nacl.signing import SigningKey
from pydantic import SecretStr

from isolator.contracts.message import message_workflow_id
from isolator.settings import Settings
from tests.conftest import Stack
from tests.platforms.discord import SIGNING_KEY, slash_command
from tests.platforms.discord import signed as discord_signed
from tests.platforms.github import issues_event
from tests.platforms.github import signed as github_signed
from tests.platforms.slack import app_mention, event_callback, new_ts
from tests.platforms.slack import signed as slack_signed
from tests.platforms.telegram import SECRET_HEADER, message
from tests.security.fuzzing import message_workflows, workflow_exists

GITHUB_SECRET = "gh-whsec-5b1e0c9a7d3f4e21"
SLACK_SECRET = "slack-signing-8d2f61c0ab7e49d3"
TELEGRAM_SECRET = "tg-webhook-secret-0f4c2b9e71"
API_TOKEN = "api-token-3c8e5a1f9b7d4062"
WRONG = "wrong-credential-6a0d2e8c4f"  # what an intruder sends: it must not be echoed or logged either
SECRETS = [GITHUB_SECRET, SLACK_SECRET, TELEGRAM_SECRET, API_TOKEN, WRONG]


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={
        "github_webhook_secret": SecretStr(GITHUB_SECRET),
        "slack_signing_secret": SecretStr(SLACK_SECRET),
        "slack_bot_token": SecretStr("xoxb-never-called"),
        "telegram_webhook_secret": SecretStr(TELEGRAM_SECRET),
        "discord_public_key": SIGNING_KEY.verify_key.encode().hex(),
        "api_token": SecretStr(API_TOKEN),
    })


def logged_text(caplog: pytest.LogCaptureFixture) -> str:
    """Everything the records hold: the formatted messages, their raw arguments and any tracebacks."""
    parts = []
    for record in caplog.records:
        parts += [record.getMessage(), repr(record.msg), repr(record.args), record.exc_text or ""]
        if record.exc_info:
            parts.append(logging.Formatter().formatException(record.exc_info))
    return "\n".join(parts)


def assert_no_secret(text: str, where: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"{where} contains {secret!r}"


def answered(response: httpx.Response) -> str:
    return response.text + "\n" + "\n".join(f"{key}: {value}" for key, value in response.headers.items())


async def test_refused_requests_start_nothing_and_leak_no_secret(
    stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    refused: list[tuple[str, httpx.Response]] = []

    # GitHub: signed with another secret, and not signed at all.
    body = json.dumps(issues_event("opened", 1, "@isolator fix it")).encode()
    deliveries = [str(uuid.uuid4()), str(uuid.uuid4())]
    for delivery, signature in zip(deliveries, [github_signed(body, WRONG), {"x-hub-signature-256": WRONG}]):
        headers = {"content-type": "application/json", "x-github-event": "issues", "x-github-delivery": delivery,
                   **signature}
        refused.append(("github", await stack.api.post("/webhooks/github", content=body, headers=headers)))

    # Slack: the right secret, but a timestamp six minutes old (a replayed request), then a wrong secret.
    ts = new_ts()
    body = json.dumps(event_callback(app_mention(ts, "<@U0BOT00001> hi"))).encode()
    for headers in (slack_signed(body, SLACK_SECRET, timestamp=int(time.time()) - 360), slack_signed(body, WRONG)):
        refused.append(("slack", await stack.api.post("/webhooks/slack", content=body, headers=headers)))

    # Telegram: no secret header, then a wrong one.
    update_id = uuid.uuid4().int % 10**9
    update = {"update_id": update_id, "message": message("hello")}
    for headers in ({}, {SECRET_HEADER: WRONG}):
        refused.append(("telegram", await stack.api.post("/webhooks/telegram", json=update, headers=headers)))

    # Discord: signed with another application's key, and a signature of another body.
    interaction = slash_command("fix it")
    body = json.dumps(interaction).encode()
    for headers in (discord_signed(body, SigningKey.generate()), discord_signed(body.replace(b"fix", b"rm"))):
        refused.append(("discord", await stack.api.post("/webhooks/discord", content=body, headers=headers)))

    # The REST API: no token, another scheme, a wrong token.
    for headers in ({}, {"authorization": f"Basic {WRONG}"}, {"authorization": f"Bearer {WRONG}"}):
        refused.append(("api", await stack.api.get("/api/codebases", headers=headers)))
        refused.append(("api", await stack.api.post("/api/codebases", json={"path": "/"}, headers=headers)))

    for source, response in refused:
        assert response.status_code == 401, (source, response.status_code, response.text)
        assert_no_secret(answered(response), f"the {source} answer")
    assert_no_secret(logged_text(caplog), "the log")
    warnings = [record.getMessage() for record in caplog.records if record.levelno >= logging.WARNING]
    for source, count in (("github delivery", 2), ("slack request", 2), ("telegram update", 2), ("discord interaction", 2),
                          ("/api/codebases", 6)):
        assert sum(source in line and "refused" in line for line in warnings) == count, (source, warnings)

    # Nothing started: not the deliveries' own workflows, nor anything else on this test's queue.
    for delivery in deliveries:
        assert not await workflow_exists(stack, message_workflow_id("github", delivery))
    assert not await workflow_exists(stack, message_workflow_id("slack", f"C0CHANNEL01:{ts}"))
    assert not await workflow_exists(stack, message_workflow_id("telegram", str(update_id)))
    assert not await workflow_exists(stack, message_workflow_id("discord", f"interaction:{interaction['id']}"))
    assert await message_workflows(stack) == set()
    assert await stack.db.fetchval("SELECT count(*) FROM codebases") == 0

    # The right token is let through: the refusals above were about the credential alone.
    allowed = await stack.api.get("/api/codebases", headers={"authorization": f"Bearer {API_TOKEN}"})
    assert allowed.status_code == 200, allowed.text
    assert_no_secret(logged_text(caplog), "the log")
