"""What a run asked a person (docs/approvals.md), on its page: each request with its answer, who gave it
and when, and while it waits, its answers as buttons. Whoever is logged in to the dashboard is an
operator: their answer goes to the environment's workflow as a press in chat does, and is recorded as
the operator's, from the dashboard (api/approvals.py)."""

from __future__ import annotations

import uuid
from typing import Annotated, Any

import asyncpg
from fastapi import APIRouter, Depends, Path, Request
from fastapi.responses import Response
from temporalio.client import Client

from api.approvals import answer_as_operator
from api.dashboard.access import Refused, actor
from api.dashboard.rendering import PageRoute, render
from api.deps import get_client, get_pool
from isolator.approval_texts import buttons
from isolator.contracts.approvals import ToolCall, parse_press_value, press_value

router = APIRouter(route_class=PageRoute)

TAKE_WORDS = ("deny", "text", "revise")  # the answers that carry the words field: a reason, an answer, a change
WORDS_LIMIT = 2000  # as a press's reason on the test adapter
# The words field of each kind of request, as its label says what it is for; a budget's answers take none.
WORDS_LABELS = {"tool": "Reason, for Deny (optional)", "question": "An answer in your own words",
                "plan": "What to change, for Revise"}


def request_view(row: asyncpg.Record, when: Any) -> dict[str, Any]:
    """A request the run made of a person, its answer (who gave it, when), and while it waits, its buttons:
    the request's own answers, as chat shows them. `when` writes a moment as the page does."""
    answer = {"pending": "waiting for an answer", "timed_out": "no answer in time: denied",
              "stopped": "ended (by /stop, the removal, or Stop)"}.get(row["state"], row["state"])
    if row["answered_by"]:
        answer += f" by {row['answered_by']}"
    if row["answered_at"]:
        answer += f" at {when(row['answered_at'])}"
    if row["answer_text"]:
        answer += f": “{row['answer_text']}”"
    given = row["tool_input"] or {}
    subject = given.get("command") or given.get("file_path") or ""
    call = ToolCall(row["tool_name"], given, row["tool_use_id"] or "") if row["tool_name"] else None
    pending = row["state"] == "pending"
    return {"code": row["code"], "kind": row["kind"], "summary": row["summary"], "subject": str(subject)[:300],
            "asked": when(row["created_at"]), "answer": answer, "state": row["state"],
            "buttons": buttons(row["kind"], row["code"], call) if pending else [],
            "words": WORDS_LABELS.get(row["kind"], "") if pending else "",
            # a question's answer may also be the words alone
            "in_words": press_value(row["code"], "text") if pending and row["kind"] == "question" else ""}


@router.post("/runs/{run_id}/approvals/{code}", include_in_schema=False)
async def answer(
    run_id: uuid.UUID,
    code: Annotated[str, Path(pattern=r"^[A-Z0-9]{4,16}$")],
    request: Request,
    form: Annotated[dict[str, str], Depends(actor)],
    pool: Annotated[asyncpg.Pool, Depends(get_pool)],
    client: Annotated[Client, Depends(get_client)],
) -> Response:
    """One of the request's answers (the button pressed: `answer`), with its words when it takes some."""
    if not await pool.fetchval("SELECT EXISTS (SELECT 1 FROM approvals WHERE code = $1 AND run_id = $2)", code, run_id):
        raise Refused(404, f"Run {run_id} asked nothing under the code {code}.")
    pressed = parse_press_value(form.get("answer", ""))
    if pressed is None or pressed.code != code:
        raise Refused(400, "This form names no answer of this request: reload the run's page and press one of its "
                           "buttons.")
    words = form.get("words", "").strip()
    if len(words) > WORDS_LIMIT:
        raise Refused(400, f"The words are {len(words)} characters long: at most {WORDS_LIMIT}.")
    if pressed.choice == "text" and not words:
        return _outcome(request, run_id, "Not answered: write the answer in the field first, then press "
                                         "“Answer in these words”.", ok=False)
    outcome = await answer_as_operator(pool, client, code, pressed.choice, pressed.option,
                                       words if pressed.choice in TAKE_WORDS else "")
    return _outcome(request, run_id, outcome.text, ok=outcome.outcome == "taken")


def _outcome(request: Request, run_id: uuid.UUID, message: str, ok: bool) -> Response:
    return render(request, request.state.session, "outcome.html", message=message, ok=ok,
                  back=(f"/runs/{run_id}", "the run"), force_form=None)
