"""Asking the human on GitHub, which has no buttons: a request's comment lists the comments that answer it
(and loses them when it is edited to its outcome), and a comment `/approve K7P2QX` is a press, signed into
the real webhook: the allow rule first, then `answer_press` on real PostgreSQL and Temporal, with what was
not taken said to the presser in a comment, and no message for the agent ever started."""

from __future__ import annotations

import uuid
from typing import Any

import asyncpg

from activities.chat.platforms.github import answering_text, make_deliverer
from activities.chat.replies import ReplyActivities
from api.platforms.github.approvals import parse_answer, press_of
from isolator.contracts.approvals import Button, Press, press_value
from isolator.contracts.message import ReplyInput
from isolator.settings import Settings
from tests.approvals import EnvironmentStandIn, recorded_request, waiting_environment  # noqa: F401 - a fixture
from tests.conftest import Stack
from tests.fakes.github_api import Comment, FakeGitHub
from tests.platforms.github import (
    REPO,
    comment,
    comment_event,
    deliver,
    person,
    request_comment,
    resolution,
    started,
)

CONVERSATION = f"{REPO}#42"
TOOL_BUTTONS = [Button("Allow once", press_value("K7P2QX", "once"), "primary"),
                Button("Allow for this conversation", press_value("K7P2QX", "conversation")),
                Button("Deny", press_value("K7P2QX", "deny"), "danger")]


# --- the comments that answer a request ----------------------------------------------------------


def test_a_tool_request_lists_its_three_answers_with_their_labels() -> None:
    assert answering_text(TOOL_BUTTONS) == (
        "Answer with a comment:\n"
        "- `/approve K7P2QX`: Allow once\n"
        "- `/approve K7P2QX for-conversation`: Allow for this conversation\n"
        "- `/deny K7P2QX [reason]`: Deny")


def test_a_question_lists_each_option_and_an_answer_in_words() -> None:
    buttons = [Button("PostgreSQL", press_value("Q1W2E3", "option", 0)),
               Button("SQLite", press_value("Q1W2E3", "option", 1)),
               Button("Deny", press_value("Q1W2E3", "deny"), "danger")]
    assert answering_text(buttons) == (
        "Answer with a comment:\n"
        "- `/answer Q1W2E3 0`: PostgreSQL\n"
        "- `/answer Q1W2E3 1`: SQLite\n"
        "- `/deny Q1W2E3 [reason]`: Deny\n"
        "- `/answer Q1W2E3 <your words>`: an answer of your own")
    # A button of its own for words is listed once, as given.
    own = [buttons[0], Button("Other…", press_value("Q1W2E3", "text"))]
    assert answering_text(own).splitlines()[1:] == ["- `/answer Q1W2E3 0`: PostgreSQL",
                                                    "- `/answer Q1W2E3 <your words>`: Other…"]


def test_a_plan_and_a_budget_list_theirs() -> None:
    plan = [Button("Approve", press_value("PLAN42", "approve"), "primary"),
            Button("Revise", press_value("PLAN42", "revise"))]
    assert answering_text(plan).splitlines()[1:] == ["- `/approve PLAN42`: Approve",
                                                     "- `/revise PLAN42 [what to change]`: Revise"]
    budget = [Button("Continue", press_value("CASH99", "continue")), Button("Stop", press_value("CASH99", "stop"))]
    assert answering_text(budget).splitlines()[1:] == ["- `/continue CASH99`: Continue", "- `/stop CASH99`: Stop"]


def test_no_buttons_of_ours_say_nothing() -> None:
    assert answering_text([]) == ""
    assert answering_text([Button("Open", "https://example.invalid"), Button("?", "isolator-approval:X:maybe")]) == ""


# --- replies: the request comment and its edit ------------------------------------------------------


async def test_a_request_lists_its_answers_and_its_update_takes_them_away(
    settings: Settings, fake: FakeGitHub, db: asyncpg.Pool
) -> None:
    fake.add_issue(REPO, 42)
    replies = ReplyActivities(db, {"github": make_deliverer(settings)})
    key = f"request-{uuid.uuid4().hex}"
    await replies.deliver_once(ReplyInput("github", CONVERSATION, "May I run `git push`?", key, buttons=TOOL_BUTTONS))
    assert fake.comments == [Comment(REPO, 42, "May I run `git push`?\n\n" + answering_text(TOOL_BUTTONS))]
    request = request_comment(fake)
    assert (request.number, request.code) == (42, "K7P2QX")
    assert request.commands == {"Allow once": "/approve K7P2QX",
                                "Allow for this conversation": "/approve K7P2QX for-conversation",
                                "Deny": "/deny K7P2QX [reason]"}

    await replies.deliver_once(ReplyInput("github", CONVERSATION, "✅ Allowed once by @octocat", f"{key}:1",
                                          updates=key))
    assert [body for _, body in fake.edits] == ["✅ Allowed once by @octocat"]
    assert len(fake.comments) == 1


# --- comments that answer ------------------------------------------------------------------------


async def approval(db: asyncpg.Pool, code: str, requested_by: str | None = "octocat", *, kind: str = "tool",
                   state: str = "pending", answered_by: str | None = None) -> str:
    """A request a run made on issue 42, as the run records it; returns its environment's id."""
    return await recorded_request(db, "github", CONVERSATION, code, requested_by=requested_by, kind=kind, state=state,
                                  answered_by=answered_by)


async def state_of(db: asyncpg.Pool, code: str) -> str:
    return await db.fetchval("SELECT state FROM approvals WHERE code = $1", code)


def a_comment(body: str, login: str = "octocat", association: str = "MEMBER") -> dict[str, Any]:
    return comment_event(42, body, sender=person(login), association=association)


async def test_each_comment_makes_the_press_its_request_takes(db: asyncpg.Pool) -> None:
    await approval(db, "TOOL01")
    await approval(db, "PLAN01", kind="plan")

    async def pressed(body: str, login: str = "Octocat") -> Press:
        answer = parse_answer("issue_comment", a_comment(body, login), "@isolator")
        assert answer is not None, body
        return await press_of(db, answer)

    def press(code: str, choice: str, option: int | None = None, reason: str = "") -> Press:
        return Press(code, choice, "github", user="octocat", option=option, reason=reason, name="@Octocat",
                     conversation_id=CONVERSATION)

    assert await pressed("/approve TOOL01") == press("TOOL01", "once")
    assert await pressed("@isolator /approve TOOL01 for-conversation") == press("TOOL01", "conversation")
    assert await pressed("/approve PLAN01") == press("PLAN01", "approve")
    assert await pressed("/deny TOOL01 not on main, please") == press("TOOL01", "deny", reason="not on main, please")
    assert await pressed("/answer Q1W2E3 1") == press("Q1W2E3", "option", option=1)
    assert await pressed("/answer Q1W2E3 SQLite, it is small\nand local") == press(
        "Q1W2E3", "text", reason="SQLite, it is small\nand local")
    assert await pressed("/revise PLAN01 keep the old API") == press("PLAN01", "revise", reason="keep the old API")
    assert await pressed("/continue CASH99 sure") == press("CASH99", "continue")
    assert await pressed("/stop CASH99") == press("CASH99", "stop")

    for not_an_answer in ("/stop", "@isolator /stop", "/stop now", "/approve k7p2qx", "/approve K7P",
                          "please /approve TOOL01", "/approveTOOL01", "/approve TOOL01x!"):
        assert parse_answer("issue_comment", a_comment(not_an_answer), "@isolator") is None, not_an_answer
    # The service's own request comment lists the commands; it answers nothing.
    bot = {"login": "isolator[bot]", "id": 2, "type": "Bot", "site_admin": False}
    own = comment_event(42, "/approve TOOL01", sender=bot)
    assert parse_answer("issue_comment", own, "@isolator") is None


async def test_an_unknown_code_is_told_in_one_comment_and_starts_nothing(stack: Stack, fake: FakeGitHub) -> None:
    fake.add_issue(REPO, 42)
    response, delivery = await deliver(stack, "issue_comment", a_comment("/approve NOPE12"))
    assert response.status_code == 200, response.text
    assert response.json() == {"status": "answered", "outcome": "unknown"}
    assert fake.comments == [Comment(REPO, 42, "@octocat: There is no request `NOPE12` waiting here.")]
    assert not await started(stack, delivery), "an answer is no message for the agent"


async def test_another_person_is_refused_and_the_request_still_waits(stack: Stack, fake: FakeGitHub) -> None:
    fake.add_issue(REPO, 42)
    await approval(stack.db, "K7P2QX", requested_by="alice")
    response = await comment(stack, fake, 42, "/approve K7P2QX", login="mallory")
    assert response.json() == {"status": "answered", "outcome": "refused"}
    assert fake.comments == [Comment(
        REPO, 42, "@mallory: Only the person who started this run, or an admin, may answer it.")]
    assert fake.reactions == []
    assert await state_of(stack.db, "K7P2QX") == "pending"


async def test_an_answered_request_says_by_whom(stack: Stack, fake: FakeGitHub) -> None:
    fake.add_issue(REPO, 42)
    await approval(stack.db, "DONE42", state="allowed", answered_by="@alice")
    response = await comment(stack, fake, 42, "/deny DONE42 too late")
    assert response.json() == {"status": "answered", "outcome": "already"}
    assert fake.comments == [Comment(REPO, 42, "@octocat: This request was already allowed by @alice.")]
    assert await state_of(stack.db, "DONE42") == "allowed"


async def test_a_sender_the_allow_rule_refuses_decides_nothing(stack: Stack, fake: FakeGitHub) -> None:
    fake.add_issue(REPO, 42)
    await approval(stack.db, "K7P2QX", requested_by="drive-by")
    response = await comment(stack, fake, 42, "/approve K7P2QX", login="drive-by", association="NONE")
    assert response.status_code == 200, response.text
    assert response.json()["status"] == "ignored"
    assert await state_of(stack.db, "K7P2QX") == "pending"
    assert fake.comments == [] and fake.reactions == []


async def test_stop_without_a_code_still_stops(stack: Stack, fake: FakeGitHub) -> None:
    fake.add_issue(REPO, 42)
    response, delivery = await deliver(stack, "issue_comment", a_comment("@isolator /stop"))
    assert response.status_code == 202, response.text
    await resolution(stack, delivery)
    assert fake.comments == [Comment(REPO, 42, "Nothing to stop: the agent is not working on a message from this "
                                               "conversation.")]


# --- a press the environment's workflow takes ---------------------------------------------------


async def test_a_taken_answer_gets_a_thumbs_up_and_no_comment(
    stack: Stack, fake: FakeGitHub, waiting_environment: Any
) -> None:
    fake.add_issue(REPO, 42)
    environment = await waiting_environment(await approval(stack.db, "K7P2QX", requested_by="octocat"))
    response = await comment(stack, fake, 42, "/deny K7P2QX not today", login="OctoCat")
    assert response.json() == {"status": "answered", "outcome": "taken"}
    decisions = await environment.query(EnvironmentStandIn.answers)
    assert [(d.choice, d.by, d.text) for d in decisions] == [("deny", "@OctoCat", "not today")]
    assert [content for _, content in fake.reactions] == ["+1"]
    assert fake.comments == []
