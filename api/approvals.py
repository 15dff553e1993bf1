"""Answers to what a run asked a person (docs/approvals.md), from every platform through `answer_press`,
and `GET /api/approvals`: every request and its answer, who gave it and when.

A press is checked here (the request is known, still waiting, answered in its own conversation, by the
person whose message started the run or an ADMIN_USERS person), then given to the environment's
workflow, which alone decides: two presses at once are one answer and one "already answered".
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any

import asyncpg
from fastapi import APIRouter, Depends, HTTPException, Path, Query, status
from pydantic import BaseModel, ConfigDict, Field
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.service import RPCError, RPCStatusCode

from api.automation_approvals import asked_in
from api.deps import get_client, get_pool, get_settings, require_api_token
from isolator.contracts.approvals import Decision, DecisionTaken, Press, PressOutcome
from isolator.contracts.environment import environment_workflow_id
from isolator.settings import Settings

router = APIRouter(prefix="/api/approvals", tags=["approvals"], dependencies=[Depends(require_api_token)])
test_router = APIRouter(prefix="/test/approvals", tags=["test adapter"], dependencies=[Depends(require_api_token)])

_LISTED = 200
# The answers each kind of request takes.
ANSWERS = {
    "tool": ("once", "conversation", "deny"),
    "question": ("option", "text", "deny"),
    "plan": ("approve", "revise"),
    "budget": ("continue", "stop"),
}
OPERATOR = "the operator (from the dashboard)"  # who answered, as the answer records it and the agent is told
_STATE_WORDS = {"allowed": "allowed", "denied": "denied", "answered": "answered", "timed_out": "timed out",
                "stopped": "ended (by /stop, a removal, or its run's end)"}


def admins(settings: Settings, platform: str) -> frozenset[str]:
    return {
        "github": settings.github_admin_users, "slack": settings.slack_admin_users,
        "telegram": settings.telegram_admin_users, "discord": settings.discord_admin_users,
    }.get(platform, frozenset())


def may_answer(settings: Settings, platform: str, user: str, requested_by: str | None) -> bool:
    """The person whose message started the run, or one of the platform's ADMIN_USERS. A run whose starter
    is not known (started before runs kept it) may be answered by anyone the platform admits."""
    user = user.lower() if platform == "github" else user
    return requested_by is None or user == requested_by or user in admins(settings, platform)


async def answer_press(pool: asyncpg.Pool, client: Client, settings: Settings, press: Press) -> PressOutcome:
    row = await pool.fetchrow("SELECT * FROM approvals WHERE code = $1", press.code)
    asked = await asked_in(pool, row) if row is not None else None  # an automation's: its report place
    if row is None or asked is None or not asked.here(press.platform, press.conversation_id):
        return PressOutcome("unknown", f"There is no request `{press.code}` waiting here.")
    if row["state"] != "pending":
        return PressOutcome("already", _already(row))
    if asked.owners is not None:
        if not (asked.owner(press.user) or press.user in admins(settings, asked.platform)):
            return PressOutcome("refused", "Only this automation's owners, or an admin, may answer it.")
    elif not may_answer(settings, row["platform"], press.user, row["requested_by"]):
        return PressOutcome("refused", "Only the person who started this run, or an admin, may answer it.")
    return await _answer(pool, client, row, Decision(str(row["id"]), press.choice, press.name or press.user,
                                                     press.option, press.reason))


async def answer_as_operator(pool: asyncpg.Pool, client: Client, code: str, choice: str, option: int | None = None,
                             text: str = "") -> PressOutcome:
    """An answer from the dashboard: whoever is logged in there is an operator, who may answer any request
    (docs/dashboard.md); it is recorded as the operator's, from the dashboard."""
    row = await pool.fetchrow("SELECT * FROM approvals WHERE code = $1", code)
    if row is None:
        return PressOutcome("unknown", f"There is no request `{code}`.")
    if row["state"] != "pending":
        return PressOutcome("already", _already(row))
    return await _answer(pool, client, row, Decision(str(row["id"]), choice, OPERATOR, option, text))


async def _answer(pool: asyncpg.Pool, client: Client, row: asyncpg.Record, decision: Decision) -> PressOutcome:
    """The answer given to the environment's workflow, which alone decides (the first answer wins)."""
    answers = ANSWERS.get(row["kind"], ())  # a daily budget's raise is a record, never asked
    if decision.choice not in answers:
        return PressOutcome("refused", f"`{decision.choice}` does not answer this request; its answers are "
                                       + ", ".join(f"`{choice}`" for choice in answers) + ".")
    try:
        taken = await client.get_workflow_handle(environment_workflow_id(str(row["environment_id"]))).execute_update(
            "answer_approval", decision, result_type=DecisionTaken)
    except RPCError as error:
        if error.status != RPCStatusCode.NOT_FOUND:  # Temporal is away a moment: nothing was decided
            return PressOutcome("unavailable", "The service could not take your answer just now: press again "
                                               "in a moment.")
        return PressOutcome("already", "This request no longer waits: its worktree is gone.")
    except WorkflowUpdateFailedError:  # the environment's workflow ended meanwhile
        return PressOutcome("already", "This request no longer waits: its worktree is gone.")
    if not taken.taken:
        refreshed = await pool.fetchrow("SELECT * FROM approvals WHERE code = $1", row["code"])
        return PressOutcome("already", _already(refreshed) if refreshed["state"] != "pending" else taken.detail)
    return PressOutcome("taken", taken.detail)


def _already(row: asyncpg.Record) -> str:
    by = f" by {row['answered_by']}" if row["answered_by"] else ""
    return f"This request was already {_STATE_WORDS.get(row['state'], row['state'])}{by}."


class ApprovalView(BaseModel):
    id: str
    code: str
    run_id: str
    environment_id: str
    conversation: str  # `platform:conversation id`
    requested_by: str | None
    kind: str  # tool, question, plan, budget, daily_budget
    tool_name: str | None
    tool_input: dict[str, Any]
    summary: str
    state: str  # pending, allowed, denied, answered, timed_out, stopped
    choice: str | None
    answered_by: str | None
    answered_at: str | None
    answer_text: str
    created_at: str


def approval_view(row: asyncpg.Record) -> ApprovalView:
    return ApprovalView(
        id=str(row["id"]), code=row["code"], run_id=str(row["run_id"]), environment_id=str(row["environment_id"]),
        conversation=f"{row['platform']}:{row['conversation_id']}", requested_by=row["requested_by"],
        kind=row["kind"], tool_name=row["tool_name"], tool_input=row["tool_input"] or {}, summary=row["summary"],
        state=row["state"], choice=row["choice"], answered_by=row["answered_by"],
        answered_at=row["answered_at"].isoformat() if row["answered_at"] else None, answer_text=row["answer_text"],
        created_at=row["created_at"].isoformat(),
    )


@router.get("")
async def list_approvals(
    pool: Annotated[asyncpg.Pool, Depends(get_pool)],
    state: Annotated[str | None, Query(pattern=r"^(pending|allowed|denied|answered|timed_out|stopped)$",
                                       description="only requests in this state")] = None,
    run: Annotated[uuid.UUID | None, Query(description="only the requests of this run")] = None,
) -> list[ApprovalView]:
    """Every request a run made of a person, newest first, with its answer: who gave it and when."""
    rows = await pool.fetch(
        """SELECT * FROM approvals WHERE ($1::text IS NULL OR state = $1) AND ($2::uuid IS NULL OR run_id = $2)
           ORDER BY created_at DESC LIMIT $3""", state, run, _LISTED)
    return [approval_view(row) for row in rows]


class TestPress(BaseModel):
    model_config = ConfigDict(extra="forbid")

    choice: str = Field(pattern=r"^(once|conversation|deny|option|text|continue|stop|approve|revise)$")
    user: str = Field("tester", min_length=1, max_length=128)
    option: int | None = Field(None, ge=0, le=100)
    reason: str = Field("", max_length=2000)


@test_router.post("/{code}")
async def press_on_test_adapter(
    code: Annotated[str, Path(pattern=r"^[A-Z0-9]{4,16}$")],
    body: TestPress,
    pool: Annotated[asyncpg.Pool, Depends(get_pool)],
    client: Annotated[Client, Depends(get_client)],
    settings: Annotated[Settings, Depends(get_settings)],
) -> dict[str, str]:
    """The test adapter's buttons: press one of a request's answers as `user`."""
    outcome = await answer_press(pool, client, settings, Press(code, body.choice, "test", body.user,
                                                                option=body.option, reason=body.reason))
    if outcome.outcome == "unknown":
        raise HTTPException(status.HTTP_404_NOT_FOUND, detail=outcome.text)
    if outcome.outcome == "refused":
        raise HTTPException(status.HTTP_403_FORBIDDEN, detail=outcome.text)
    if outcome.outcome == "already":
        raise HTTPException(status.HTTP_409_CONFLICT, detail=outcome.text)
    if outcome.outcome == "unavailable":
        raise HTTPException(status.HTTP_503_SERVICE_UNAVAILABLE, detail=outcome.text)
    return {"outcome": outcome.outcome, "detail": outcome.text}
