"""Starting a MessageWorkflow: the one way every adapter hands a message over."""

from __future__ import annotations

import dataclasses
import logging
from typing import Literal

from temporalio.client import Client, WorkflowHandle
from temporalio.common import (
    SearchAttributePair,
    TypedSearchAttributes,
    WorkflowIDConflictPolicy,
    WorkflowIDReusePolicy,
)
from temporalio.exceptions import WorkflowAlreadyStartedError

from isolator import metrics
from isolator.contracts import search_attributes
from isolator.contracts.message import (
    IsolationHints,
    MessageInput,
    Resolution,
    message_workflow_id,
)
from isolator.contracts.trust import Admission
from isolator.settings import Settings
from workflows.message import MessageWorkflow

log = logging.getLogger(__name__)


class UnusableText(ValueError):
    """A field of the message holds text PostgreSQL cannot store or a platform cannot be sent; says which."""


def check_text(message: MessageInput) -> None:
    """Refuse NUL characters and lone surrogates (not encodable as UTF-8), before anything starts.

    PostgreSQL stores neither and no platform takes a lone surrogate: a reply quoting one (`/worktree
    create <name>` does) would fail its activity on every retry, and the message would never finish.
    """
    fields = {"conversation id": message.conversation_id, "text": message.text, "message key": message.message_key}
    if message.hints is not None:
        fields.update({f"hints.{key}": value for key, value in dataclasses.asdict(message.hints).items()})
    if message.admission is not None:  # it quotes the sender's ids, as the payload gave them
        fields.update({"sender": message.admission.sender, "refusal": message.admission.refused or ""})
    for name, value in fields.items():
        for text in value if isinstance(value, list) else [value]:
            if not isinstance(text, str):
                continue
            if "\x00" in text:
                raise UnusableText(f"the {name} contains a NUL character")
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:
                raise UnusableText(f"the {name} is not valid Unicode (it has a lone surrogate)") from None


async def dispatch_message(
    client: Client, task_queue: str, message: MessageInput, *, eagerly: bool = True
) -> WorkflowHandle[MessageWorkflow, Resolution]:
    """Start the message's workflow; a redelivered key gets the handle of the one already started.

    Raises UnusableText, before anything starts, for text no workflow could carry.
    """
    check_text(message)
    workflow_id = message_workflow_id(message.platform, message.message_key)
    preview = " ".join(message.text.split())[:80]
    attributes = [
        SearchAttributePair(search_attributes.PLATFORM, message.platform),
        # `platform:id`, as the API and the environment's IsolatorWorkflowId write a conversation
        SearchAttributePair(search_attributes.CONVERSATION, f"{message.platform}:{message.conversation_id}"),
    ]
    memo: dict[str, str] = {}
    if (admission := message.admission) is not None:
        memo["sender"] = admission.sender
        if admission.refused is not None:
            # Findable as refused from its start (GET /api/refusals), not only once it has answered.
            attributes.append(SearchAttributePair(search_attributes.OUTCOME, "refused"))
            memo["refused"] = admission.refused
            log.info("%s refused: %s", workflow_id, admission.sender)
    try:
        handle = await client.start_workflow(
            MessageWorkflow.run,
            message,
            id=workflow_id,
            task_queue=task_queue,
            # A redelivered webhook joins the running workflow, or is refused once it has finished.
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            search_attributes=TypedSearchAttributes(attributes),
            memo=memo or None,
            static_summary=f"{message.platform} {message.conversation_id}: {preview}",
            # Its first task comes back in the answer when a worker of this client serves the queue
            # (`isolator api`, `isolator dev`); otherwise the request changes nothing (EAGER_START).
            request_eager_start=eagerly,
        )
    except WorkflowAlreadyStartedError as already:
        log.info("duplicate delivery %s: already processed", workflow_id)
        metrics.REDELIVERIES.labels(message.platform, "message").inc()
        return client.get_workflow_handle_for(MessageWorkflow.run, workflow_id, run_id=already.run_id)
    return handle


async def start_message(
    settings: Settings,
    client: Client,
    *,
    platform: str,
    conversation_id: str,
    text: str,
    message_key: str,
    hints: IsolationHints | None = None,
    kind: Literal["message", "closed"] = "message",
    admission: Admission | None = None,
    user: str | None = None,
) -> WorkflowHandle[MessageWorkflow, Resolution]:
    """What every adapter calls: build the message (`/clone` defaulting to this host) and start its workflow.

    `admission`: the platform's allow rule applied to the sender (isolator/trust.py); a refused
    message still starts its workflow, which answers once and records the outcome `refused`. `user`: the
    sender's id where no allow rule applies (the test adapter).

    Raises UnusableText, and Temporal's RPCError when it cannot be reached: each adapter answers those
    in its platform's own shape.
    """
    message = MessageInput(
        platform=platform,
        conversation_id=conversation_id,
        text=text,
        message_key=message_key,
        default_host=settings.host,
        hints=hints,
        kind=kind,
        admission=admission,
        user=admission.user if admission is not None else user,
    )
    return await dispatch_message(client, settings.task_queue, message, eagerly=settings.eager_start)
