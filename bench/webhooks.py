"""Webhook acknowledgement: from a signed request to its HTTP response, GitHub and Slack.

Every request is a real message (a comment or a mention of the bot in one conversation), so the
acknowledgement includes starting its workflow; the first creates the worktree, the rest reuse it.
Payloads and signatures are the test suite's, shaped like the platforms' documented examples.

Two pacings, each its own line:
- one at a time: the next delivery is sent once the previous message's workflow has finished, as the
  reuse case is measured. This is the acknowledgement itself, and the figure the target applies to.
- back to back: the next delivery is sent as soon as the previous one is acknowledged, so deliveries
  arrive faster than their workflows finish (about 35 a second against the 30-odd messages a second
  the throughput case sustains on two cores). The acknowledgement then shares the cores with a growing
  queue of work; the figure shows what a burst does to it, with no target.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Callable, Literal

from api.platforms.github.keys import event_key
from api.platforms.slack.events import parse_message
from bench.figures import Figure, Latency, timed, verdict
from bench.stack import Stack
from isolator.contracts.message import message_workflow_id
from tests.fakes.slack_api import BOT_USER_ID
from tests.platforms.github import REPO, comment_event
from tests.platforms.github import signed as github_signature
from tests.platforms.slack import app_mention, event_callback, new_ts
from tests.platforms.slack import signed as slack_signature

ISSUE = 1
Pacing = Literal["one at a time", "back to back"]
PACINGS: tuple[Pacing, ...] = ("one at a time", "back to back")


@dataclass
class Delivery:
    path: str
    body: bytes
    headers: dict[str, str]
    accepted: int
    workflow_id: str


def _github_delivery() -> Delivery:
    payload = comment_event(ISSUE, "@isolator bench")  # a comment of its own: its id names the workflow
    body = json.dumps(payload).encode()
    headers = {"content-type": "application/json", "x-github-event": "issue_comment",
               "x-github-delivery": str(uuid.uuid4()), **github_signature(body)}
    return Delivery("/webhooks/github", body, headers, 202,
                    message_workflow_id("github", event_key("issue_comment", payload)))


def _slack_delivery(thread: str) -> Delivery:
    event = app_mention(new_ts(), f"<@{BOT_USER_ID}> bench", thread_ts=thread)
    body = json.dumps(event_callback(event)).encode()
    message = parse_message(event, BOT_USER_ID)
    assert message is not None
    return Delivery("/webhooks/slack", body, slack_signature(body), 200,
                    message_workflow_id("slack", message.message_key))


async def github(stack: Stack, runs: int) -> list[Figure]:
    stack.github.add_issue(REPO, ISSUE)
    return [await _measure(stack, "GitHub issue_comment", _github_delivery, runs, pacing) for pacing in PACINGS]


async def slack(stack: Stack, runs: int) -> list[Figure]:
    thread = new_ts()
    return [await _measure(stack, "Slack app_mention", lambda: _slack_delivery(thread), runs, pacing)
            for pacing in PACINGS]


async def _measure(stack: Stack, kind: str, make: Callable[[], Delivery], runs: int, pacing: Pacing) -> Figure:
    samples = []
    for _ in range(runs):
        delivery = make()
        samples.append(await timed(lambda: _post(stack, delivery)))
        if pacing == "one at a time":
            await stack.temporal.get_workflow_handle(delivery.workflow_id).result()
    latency = Latency.of(samples)
    case = f"webhook ack, {kind}, {pacing}"
    if pacing == "back to back":
        return Figure(case, str(latency), "no target: a burst beyond capacity", "", {"latency": vars(latency)})
    return Figure(case, str(latency), "target p99 <= 50 ms", verdict(latency.p99 <= 50), {"latency": vars(latency)})


async def _post(stack: Stack, delivery: Delivery) -> None:
    response = await stack.api.post(delivery.path, content=delivery.body, headers=delivery.headers)
    if response.status_code != delivery.accepted:
        raise RuntimeError(f"{delivery.path} answered {response.status_code}: {response.text}")
