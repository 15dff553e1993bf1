"""A GitHub delivery replayed: the same signed body posted again under a new `X-GitHub-Delivery`, which the
signature does not cover, is the same event. It is acknowledged and starts nothing (docs/platforms.md#redeliveries)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import httpx

from tests.agents import command
from tests.approvals import conversation_runs_when_ended
from tests.conftest import Stack
from tests.fakes.github_api import Comment, FakeGitHub
from tests.platforms.github import REPO, URL, comment_event, issues_event, signed
from workflows.message import MessageWorkflow


async def post(stack: Stack, event: str, body: bytes) -> httpx.Response:
    """The signed body, under a delivery id of its own, as a replay would send it."""
    headers = {"content-type": "application/json", "x-github-event": event, "x-github-delivery": str(uuid.uuid4()),
               **signed(body)}
    return await stack.api.post("/webhooks/github", content=body, headers=headers)


async def settled(stack: Stack, response: httpx.Response) -> None:
    """Once the message's workflow the answer names has ended: its run, if any, is queued by then."""
    assert response.status_code == 202, response.text
    await stack.temporal.get_workflow_handle_for(MessageWorkflow.run, response.json()["workflow_id"]).result()


async def test_a_replayed_comment_runs_the_agent_once_and_the_next_comment_runs_too(
        stack: Stack, fake: FakeGitHub, repo: Path, tmp_path: Path) -> None:
    stack.settings.agent_command_line = command("recorder", str(tmp_path / "runs.log"), "0")
    await stack.register(repo, url=URL)
    fake.add_issue(REPO, 61)
    first = json.dumps(comment_event(61, "@isolator fix the login")).encode()
    for _ in range(2):
        await settled(stack, await post(stack, "issue_comment", first))
    # A second comment, queued after whatever the replay queued: once it has run, every run has.
    await settled(stack, await post(stack, "issue_comment", json.dumps(comment_event(61, "@isolator and the logout")).encode()))

    runs = await conversation_runs_when_ended(stack, f"github:{REPO}#61", 2)
    assert [run["message"] for run in runs] == ["@isolator fix the login", "@isolator and the logout"]
    assert [run["status"] for run in runs] == ["done", "done"]


async def test_a_replayed_issue_and_a_replayed_close_start_one_workflow_each(
        stack: Stack, fake: FakeGitHub, repo: Path) -> None:
    await stack.register(repo, url=URL)
    fake.add_issue(REPO, 62)
    for payload in (issues_event("opened", 62, "@isolator look"), issues_event("closed", 62)):
        body = json.dumps(payload).encode()
        answers = [await post(stack, "issues", body) for _ in range(2)]
        assert [answer.status_code for answer in answers] == [202, 202], [answer.text for answer in answers]
        assert answers[0].json()["workflow_id"] == answers[1].json()["workflow_id"], payload["action"]


async def test_a_replayed_answer_comment_is_answered_once(stack: Stack, fake: FakeGitHub, repo: Path) -> None:
    await stack.register(repo, url=URL)
    fake.add_issue(REPO, 63)
    payload = comment_event(63, "/approve NOPE12")
    payload["comment"]["id"] = fake.add_comment(REPO, 63, "/approve NOPE12", "octocat")["id"]
    body = json.dumps(payload).encode()
    answers = [await post(stack, "issue_comment", body) for _ in range(2)]
    assert [answer.status_code for answer in answers] == [200, 200], [answer.text for answer in answers]
    told = Comment(REPO, 63, "@octocat: There is no request `NOPE12` waiting here.")
    assert fake.comments == [told], "the replay told nobody anything"

    # Another comment with the same words is another answer, and is answered.
    again = comment_event(63, "/approve NOPE12")
    again["comment"]["id"] = fake.add_comment(REPO, 63, "/approve NOPE12", "octocat")["id"]
    assert (await post(stack, "issue_comment", json.dumps(again).encode())).status_code == 200
    assert fake.comments == [told, told]
