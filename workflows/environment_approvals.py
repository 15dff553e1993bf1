"""The durable wait for a person's answer (docs/approvals.md), inside the environment's workflow.

A run that asked a person ended its turn; its request was recorded and sent. Here the workflow waits
for the answer, as long as APPROVAL_TIMEOUT_HOURS, holding no process: a worker or Temporal restart
replays to the same wait. Meanwhile the run counts as running: the conversations' next messages queue
behind it, and a removal waits (or, forced, ends the wait). The answer comes as the `answer_approval`
update (api/approvals.py checked who gave it), or for a question as the asker's next message; `/stop`
ends the wait. The request is closed and edited to its answer, and unless the answer ends the run
(a budget's Stop, `/stop`), a run that resumes the session with it goes first in the queue.
"""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import timedelta
from typing import Callable

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from isolator import approval_texts
    from isolator.contracts.agent import RunRequest
    from isolator.contracts.approvals import (
        AllowedCalls,
        ApprovalAsk,
        ApprovalState,
        CloseApprovalInput,
        Decision,
        DecisionTaken,
    )
    from isolator.contracts.environment import AgentRunInput, EnvironmentState
    from workflows.steps.runs import approvals

# How long a press may come before the run that asked has ended (its request is sent first).
ANSWER_BEFORE_WAIT = timedelta(minutes=2)
# From this version a run that asks a person is waited for and resumed.
ASKS_THE_HUMAN = "asks-the-human"
STATES: dict[str, ApprovalState] = {
    "once": "allowed", "conversation": "allowed", "approve": "allowed", "continue": "allowed",
    "deny": "denied", "timeout": "timed_out", "option": "answered", "text": "answered", "revise": "answered",
    "stop": "stopped", "stopped": "stopped",
}
# What a press that was taken is told (the request itself is edited to the answer).
TAKEN = {"once": "Allowed once: the run goes on.", "conversation": "Allowed for this conversation: the run goes on.",
         "deny": "Denied: the agent is told.", "option": "Answered: the agent goes on with it.",
         "text": "Answered: the agent goes on with it.", "approve": "Plan approved: the agent carries it out.",
         "revise": "The agent revises its plan.", "continue": "Continued: the run goes on.", "stop": "Stopped."}


async def wait_for_answer(state: EnvironmentState, request: RunRequest, ask: ApprovalAsk,
                          interrupted: Callable[[], bool]) -> asyncio.Task[None] | None:
    """Wait for the answer. When a run goes on with it (queued first), the request's closing (its row, its
    message edited) is returned still under way, for the next run to await once started: the resumed
    session does not wait for a platform's API. None when the run ends there."""
    state.awaiting, state.decision = ask, None
    held, state.early_answer = state.early_answer, None
    if held is not None and not (held.answers == ask.approval_id and answers_question(state, held)):
        state.runs.insert(0, held)  # not a reply to this request after all: a message like any other
    workflow.set_current_details(f"Waiting for an answer to {ask.summary} (code `{ask.code}`)")
    try:
        await workflow.wait_condition(lambda: state.decision is not None or state.stop_running or interrupted(),
                                      timeout=timedelta(hours=ask.timeout_hours))
    except TimeoutError:
        state.decision = Decision(ask.approval_id, "timeout", "nobody")
    decision = state.decision if state.decision is not None else Decision(ask.approval_id, "stopped", "")
    answered_by = state.answer_run
    state.awaiting, state.decision, state.answer_run = None, None, None
    workflow.set_current_details("")
    ends_run = decision.choice in ("stop", "stopped") or (decision.choice == "timeout" and ask.kind == "budget")
    closing = asyncio.create_task(approvals.close_approval(CloseApprovalInput(decision, STATES[decision.choice],
                                                                              ends_run)))
    if ends_run:
        await closing  # ended: a budget nobody raised is not spent
        return None
    await _queue_first(state, _continuation(state, request, ask, decision, answered_by))
    return closing


async def take_answer(state: EnvironmentState, decision: Decision) -> DecisionTaken:
    """The `answer_approval` update: the answer, if the request still waits for one. The run sends its
    request just before it ends: a quick press may come before its end reaches the workflow."""
    try:
        await workflow.wait_condition(lambda: state.running is None or (
            state.awaiting is not None and state.awaiting.approval_id == decision.approval_id),
            timeout=ANSWER_BEFORE_WAIT)
    except TimeoutError:
        pass
    awaiting = state.awaiting
    if awaiting is None or awaiting.approval_id != decision.approval_id or state.decision is not None:
        return DecisionTaken(False, "This request no longer waits for an answer.")
    state.decision = decision
    return DecisionTaken(True, TAKEN.get(decision.choice, "Answered."))


def answers_question(state: EnvironmentState, message: RunRequest) -> bool:
    """A message of the asker while their question waits is its answer, in their own words: its run is the
    one that goes on. The question is sent just before the run that asked ends: a reply that came first
    (the hand-off found the question pending) is held for the wait, which takes it."""
    awaiting = state.awaiting
    if any(held is not None and held.key == message.key for held in (state.early_answer, state.answer_run)):
        return True  # a retried hand-off of the reply already taken
    if awaiting is None and message.answers is not None and state.early_answer is None \
            and state.running is not None and state.running.conversation == message.conversation:
        state.early_answer = message
        return True
    if (awaiting is None or awaiting.kind != "question" or state.decision is not None
            or message.conversation != awaiting.conversation
            or awaiting.requested_by not in (None, message.user)):
        return False
    state.decision = Decision(awaiting.approval_id, "text", message.user or "the asker", text=message.text)
    state.answer_run = message
    return True


def release_held_reply(state: EnvironmentState) -> None:
    """A reply held for a wait that did not come (the run did not ask, or was stopped): first in the queue,
    a message like any other."""
    if state.early_answer is not None:
        state.runs.insert(0, state.early_answer)
        state.early_answer = None


def _continuation(state: EnvironmentState, request: RunRequest, ask: ApprovalAsk, decision: Decision,
                  answered_by: RunRequest | None) -> RunRequest:
    environment = state.environment
    text = approval_texts.resume_text(ask.kind, ask.call, decision, environment.working_path, ask.timeout_hours)
    allowed = AllowedCalls([ask.call] if ask.call is not None and decision.choice in ("once", "conversation", "approve")
                           else [])
    if answered_by is not None:  # the asker's message: its own run goes on, with the answer as its text
        return dataclasses.replace(answered_by, text=text, allowed=allowed, continues=ask.approval_id)
    return RunRequest(str(workflow.uuid4()), f"{ask.approval_id}:continued", request.conversation, text,
                      request.plan, user=request.user, allowed=allowed, continues=ask.approval_id, trace=request.trace)


async def _queue_first(state: EnvironmentState, continuation: RunRequest) -> None:
    await approvals.queue_continuation(AgentRunInput(continuation, state.environment, state.ports))
    state.runs.insert(0, continuation)
