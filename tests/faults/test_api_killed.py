"""The API SIGKILLed after it has read a webhook and before it answered, on GitHub, Slack and
Telegram: the platform's redelivery, with the same delivery key, produces exactly one workflow, and
its replies once each (the worktree's line, then, no agent being configured, the notice). Real API and worker processes, the platforms' fake APIs, real git, PostgreSQL and Temporal."""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import asyncpg
import httpx
import pytest
from temporalio.client import Client

from api.platforms.github.keys import event_key
from isolator.contracts.message import message_workflow_id
from isolator.settings import Settings
from tests.conftest import free_port
from tests.fakes.github_api import TOKEN as GITHUB_TOKEN
from tests.fakes.github_api import FakeGitHub
from tests.fakes.slack_api import BOT_TOKEN as SLACK_TOKEN
from tests.fakes.slack_api import BOT_USER_ID, FakeSlack
from tests.fakes.telegram_api import BOT_TOKEN as TELEGRAM_TOKEN
from tests.fakes.telegram_api import FakeTelegram
from tests.faults.conftest import WorkerProcess, answering, api_process
from tests.gitrepos import first_replies
from tests.platforms import github, slack, telegram
from workflows.message import MessageWorkflow


@dataclass
class Delivery:
    """One webhook as a platform sends it, and how to read the replies it got."""

    platform: str
    path: str
    body: bytes
    headers: Callable[[int], dict[str, str]]  # by attempt: a redelivery may carry a retry header
    key: str  # the platform's key of the event, which names the workflow
    replies: Callable[[], list[str]]  # the texts delivered to its conversation, in order


def github_delivery(fake: FakeGitHub) -> Delivery:
    number = uuid.uuid4().int % 10**6
    fake.add_issue(github.REPO, number)
    payload = github.comment_event(number, "@isolator fix it")
    body = json.dumps(payload).encode()
    headers = {"content-type": "application/json", "x-github-event": "issue_comment",
               "x-github-delivery": str(uuid.uuid4()), **github.signed(body)}
    return Delivery("github", "/webhooks/github", body, lambda attempt: headers, event_key("issue_comment", payload),
                    lambda: [comment.body for comment in fake.comments if comment.number == number])


def slack_delivery(fake: FakeSlack) -> Delivery:
    ts = slack.new_ts()
    body = json.dumps(slack.event_callback(slack.app_mention(ts, f"<@{BOT_USER_ID}> fix it"))).encode()

    def headers(attempt: int) -> dict[str, str]:
        retry = {"x-slack-retry-num": str(attempt), "x-slack-retry-reason": "http_error"} if attempt else {}
        return {**slack.signed(body), **retry}

    return Delivery("slack", "/webhooks/slack", body, headers, f"{slack.CHANNEL}:{ts}",
                    lambda: [post.text for post in fake.posts if post.thread_ts == ts])


def telegram_delivery(fake: FakeTelegram) -> Delivery:
    chat = {**telegram.PRIVATE, "id": uuid.uuid4().int % 10**9}
    update_id = uuid.uuid4().int % 10**9
    body = json.dumps({"update_id": update_id, "message": telegram.message("fix it", chat)}).encode()
    headers = {"content-type": "application/json", telegram.SECRET_HEADER: telegram.WEBHOOK_SECRET}
    return Delivery("telegram", "/webhooks/telegram", body, lambda attempt: headers, str(update_id),
                    lambda: [sent.text for sent in fake.sent if sent.chat_id == chat["id"]])


DELIVERIES: dict[str, Callable[[Any], Delivery]] = {
    "github": github_delivery, "slack": slack_delivery, "telegram": telegram_delivery,
}
ROUNDS = int(os.environ.get("ISOLATOR_SOAK_ROUNDS", "1"))


@pytest.fixture
async def fakes() -> Any:
    started = {"github": FakeGitHub(), "slack": FakeSlack(), "telegram": FakeTelegram()}
    for fake in started.values():
        await fake.start()
    yield started
    for fake in started.values():
        await fake.stop()


def platform_environment(fakes: dict[str, Any]) -> dict[str, str]:
    return {
        "GITHUB_WEBHOOK_SECRET": github.SECRET, "GITHUB_TOKEN": GITHUB_TOKEN, "GITHUB_API_URL": fakes["github"].api_url,
        "SLACK_SIGNING_SECRET": slack.SIGNING_SECRET, "SLACK_BOT_TOKEN": SLACK_TOKEN,
        "SLACK_API_URL": fakes["slack"].api_url,
        "TELEGRAM_WEBHOOK_SECRET": telegram.WEBHOOK_SECRET, "TELEGRAM_BOT_TOKEN": TELEGRAM_TOKEN,
        "TELEGRAM_API_URL": fakes["telegram"].api_url,
        "TELEGRAM_ALLOWED_USERS": str(telegram.USER["id"]),  # the sender of telegram.message()
    }


@pytest.mark.parametrize("platform, point", [
    ("github", "after-start"), ("slack", "after-start"), ("telegram", "after-start"), ("github", "before-start"),
])
async def test_a_webhook_redelivered_after_the_api_was_killed_makes_one_workflow_and_one_reply(
    platform: str, point: str, fakes: dict[str, Any], settings: Settings, temporal: Client, db: asyncpg.Pool,
    repo: Path, tmp_path: Path,
) -> None:
    secrets = platform_environment(fakes)
    worker = WorkerProcess(settings, tmp_path, extra_env={**secrets, "MAX_WORKTREES_PER_CODEBASE": "1000"})
    port = free_port()
    api = api_process(settings, tmp_path, port, **secrets)
    url = f"http://127.0.0.1:{port}"
    try:
        worker.start()
        for round_number in range(ROUNDS):
            marker = tmp_path / f"paused-{round_number}"
            delivery = DELIVERIES[platform](fakes[platform])
            api.start(ISOLATOR_FAULT_API_PAUSE=point, ISOLATOR_FAULT_MARKER=str(marker))
            await answering(url, api)
            async with httpx.AsyncClient(base_url=url, timeout=60) as client:
                await register_with_url(client, repo)
                first = asyncio.create_task(client.post(delivery.path, content=delivery.body,
                                                        headers=delivery.headers(0)))
                for _ in range(600):
                    if marker.exists():
                        break
                    await asyncio.sleep(0.05)
                assert marker.exists(), api.log_text()[-3000:]
                api.kill()
                with pytest.raises(httpx.TransportError):
                    await first  # the platform saw no answer: it delivers again
            api.start()
            await answering(url, api)
            async with httpx.AsyncClient(base_url=url, timeout=60) as client:
                again = await client.post(delivery.path, content=delivery.body, headers=delivery.headers(1))
            assert again.status_code in (200, 202), again.text
            api.stop()
            await one_workflow_and_its_replies_once(temporal, db, platform, delivery, round_number + 1, worker, repo)
    finally:
        api.stop()
        worker.stop()


async def one_workflow_and_its_replies_once(temporal: Client, db: asyncpg.Pool, platform: str, delivery: Delivery,
                                            environments: int, worker: WorkerProcess, repo: Path) -> None:
    workflow_id = message_workflow_id(platform, delivery.key)
    result = await temporal.get_workflow_handle_for(MessageWorkflow.run, workflow_id).result()
    assert result.outcome == "created", worker.log_text()[-3000:]
    for _ in range(100):  # visibility trails the history by a moment
        runs = [execution async for execution in temporal.list_workflows(f"WorkflowId = '{workflow_id}'")]
        if runs:
            break
        await asyncio.sleep(0.1)
    assert len(runs) == 1, "one workflow for the delivery"
    expected = first_replies(result.branch or "", repo)  # no agent is configured: the notice follows
    assert result.replies == expected, result
    for _ in range(100):
        if len(delivery.replies()) >= len(expected):
            break
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.5)  # a reply said twice would have come by now
    assert delivery.replies() == expected
    assert await db.fetchval("SELECT count(*) FROM isolation_environments WHERE status = 'active'") == environments


async def register_with_url(client: httpx.AsyncClient, repo: Path) -> None:
    """The repository, known by its GitHub URL too, so that GitHub's events find it."""
    response = await client.post("/api/codebases", json={"path": str(repo), "url": github.URL})
    assert response.status_code in (200, 201), response.text

