"""Webhook acknowledgement: from a signed request to its HTTP response, GitHub and Slack.

Every request is a real message (a comment or a mention of the bot in one conversation), so the
acknowledgement includes starting its workflow; the first creates the worktree, the rest reuse it.
Payloads and signatures are the test suite's, shaped like the platforms' documented examples.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from bench.figures import Figure, Latency, timed, verdict
from bench.stack import Stack
from tests.fakes.slack_api import BOT_USER_ID
from tests.test_github_webhook import REPO, comment_event, signed as github_signature
from tests.test_slack_webhook import app_mention, event_callback, new_ts, signed as slack_signature

ISSUE = 1


async def _post(stack: Stack, path: str, body: bytes, headers: dict[str, str], accepted: int) -> None:
    response = await stack.api.post(path, content=body, headers=headers)
    if response.status_code != accepted:
        raise RuntimeError(f"{path} answered {response.status_code}: {response.text}")


async def github(stack: Stack, runs: int) -> Figure:
    stack.github.add_issue(REPO, ISSUE)
    samples = []
    for _ in range(runs):
        body = json.dumps(comment_event(ISSUE, "@isolator bench")).encode()
        headers = {"content-type": "application/json", "x-github-event": "issue_comment",
                   "x-github-delivery": str(uuid.uuid4()), **github_signature(body)}
        samples.append(await timed(lambda: _post(stack, "/webhooks/github", body, headers, 202)))
    return _figure("webhook ack, GitHub issue_comment", samples)


async def slack(stack: Stack, runs: int) -> Figure:
    thread = new_ts()
    samples = []
    for _ in range(runs):
        payload: dict[str, Any] = event_callback(app_mention(new_ts(), f"<@{BOT_USER_ID}> bench", thread_ts=thread))
        body = json.dumps(payload).encode()
        samples.append(await timed(lambda: _post(stack, "/webhooks/slack", body, slack_signature(body), 200)))
    return _figure("webhook ack, Slack app_mention", samples)


def _figure(case: str, samples: list[float]) -> Figure:
    latency = Latency.of(samples)
    return Figure(case, str(latency), "target p99 <= 50 ms", verdict(latency.p99 <= 50), {"latency": vars(latency)})
