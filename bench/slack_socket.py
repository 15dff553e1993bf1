"""Slack over Socket Mode against Slack over HTTP: from an event sent to the moment Slack knows its
workflow has started.

Both ways go into the same `isolator api` process (its Socket Mode client connected to the test suite's
fake Slack at start) and through the same bolt listeners, which start the message's workflow eagerly
before answering:
- socket: the fake's WebSocket server sends an `events_api` envelope; the time ends when the
  envelope's acknowledgement comes back on the socket;
- webhook (the baseline): the same kind of event, signed, posted to `/webhooks/slack`; the time ends
  with its 200.

Each sample is an `app_mention` in a thread of its own side (the thread's worktree made by the first,
reused by the rest), one at a time: the next is sent once the previous message's workflow has finished.
The two sides take turns, first one then the other, so that a slow moment of the machine falls on both.
"""

from __future__ import annotations

import json
import time

from api.platforms.slack.events import parse_message
from bench.figures import Figure, Latency, timed, verdict
from bench.stack import Stack
from isolator.contracts.message import message_workflow_id
from tests.fakes.slack_api import BOT_USER_ID
from tests.platforms.slack import app_mention, event_callback, new_ts
from tests.platforms.slack import signed as slack_signature

TARGET_RATIO = 1.1  # the socket's p50 at most this times the webhook's


def _event(thread: str) -> tuple[dict, str]:
    """An Events API callback mentioning the bot in `thread`, and its message's workflow id."""
    event = app_mention(new_ts(), f"<@{BOT_USER_ID}> bench", thread_ts=thread)
    message = parse_message(event, BOT_USER_ID)
    assert message is not None
    return event_callback(event), message_workflow_id("slack", message.message_key)


async def _by_webhook(stack: Stack, thread: str) -> tuple[float, str]:
    payload, workflow_id = _event(thread)
    body = json.dumps(payload).encode()

    async def post() -> None:
        response = await stack.api.post("/webhooks/slack", content=body, headers=slack_signature(body))
        if response.status_code != 200:
            raise RuntimeError(f"/webhooks/slack answered {response.status_code}: {response.text}")

    return await timed(post), workflow_id


async def _by_socket(stack: Stack, thread: str) -> tuple[float, str]:
    payload, workflow_id = _event(thread)
    envelope = await stack.slack_socket.send("events_api", payload)
    ack = await stack.slack_socket.acked(envelope, timeout=120)
    return (ack.at - stack.slack_socket.sent_at[envelope]) * 1000, workflow_id


async def socket_against_webhook(stack: Stack, runs: int) -> list[Figure]:
    await stack.slack_socket.connection(timeout=120)  # the API process connected at its start
    threads = {"socket": new_ts(), "webhook": new_ts()}
    sides = {"socket": _by_socket, "webhook": _by_webhook}
    samples: dict[str, list[float]] = {"socket": [], "webhook": []}
    began = time.monotonic()
    for index in range(runs + 1):
        for side in ("socket", "webhook") if index % 2 == 0 else ("webhook", "socket"):
            milliseconds, workflow_id = await sides[side](stack, threads[side])
            await stack.temporal.get_workflow_handle(workflow_id).result()
            if index > 0:  # the first of each makes its thread's worktree: not the path measured
                samples[side].append(milliseconds)
    socket, webhook = Latency.of(samples["socket"]), Latency.of(samples["webhook"])
    ratio = socket.p50 / webhook.p50
    data = {"socket": vars(socket), "webhook": vars(webhook), "p50_ratio": round(ratio, 3),
            "seconds": round(time.monotonic() - began, 1)}
    return [
        Figure("Slack Socket Mode envelope to workflow started, one at a time", str(socket),
               f"webhook {webhook}; p50 x{ratio:.3f}, target <= x{TARGET_RATIO}", verdict(ratio <= TARGET_RATIO),
               data),
    ]
