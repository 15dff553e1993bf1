"""Stub of activities/chat/replies.py: a reply to the conversation's platform, delivered once."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError
from temporalio.exceptions import TimeoutError as StepTimeout

from isolator.contracts.message import ReplyInput
from workflows.steps.options import HEARTBEAT_TIMEOUT


async def send_reply(reply: ReplyInput, locally: bool = False) -> None:
    """Deliver a reply once. One the platform refused for good, or that stayed undeliverable for hours,
    is logged, never raised: the work it reports on is done, and an environment workflow must outlive
    a locked issue or a bot removed from a chat.

    `locally`: as a local activity, which saves the message a workflow task; the SDK waits out long
    retry intervals with timers."""
    # Platforms can be down for a while; keep trying with backoff, deliver once.
    options = dict(start_to_close_timeout=timedelta(seconds=30), schedule_to_close_timeout=timedelta(hours=6),
                   retry_policy=RetryPolicy(initial_interval=timedelta(seconds=1), maximum_interval=timedelta(minutes=2)))
    try:
        if locally:
            await workflow.execute_local_activity("send_reply", reply, **options)
        else:
            await workflow.execute_activity("send_reply", reply, heartbeat_timeout=HEARTBEAT_TIMEOUT, **options)
    except (ActivityError, ApplicationError, StepTimeout) as error:  # a local activity's error arrives unwrapped
        cause = error.cause if isinstance(error, ActivityError) else error
        workflow.logger.warning("reply %s not delivered: %s", reply.idempotency_key, cause)
