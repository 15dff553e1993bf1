"""Fuzzing the GitHub webhook with correctly signed bodies: never a 5xx, and nothing started for a
body the webhook refuses."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
from hypothesis import strategies as st

from tests.conftest import Stack
from tests.platforms.github import (
    URL,
    comment_event,
    issues_event,
    pull_request_event,
    signed,
)
from tests.security.fuzzing import (
    draw_examples,
    hostile_text,
    json_values,
    mutated,
    settled_workflows,
    type_confusions,
)

MENTION = "@isolator please look"


def offline(payload: dict[str, Any]) -> dict[str, Any]:
    """An event whose repository, if a mutation makes it unknown, is "cloned" from nowhere: never the network."""
    return {**payload, "repository": {**payload["repository"], "clone_url": "file:///nonexistent/hello-world.git"}}


VALID = [
    ("issues", offline(issues_event("opened", 1, MENTION))),
    ("issue_comment", offline(comment_event(2, MENTION))),
    ("issue_comment", offline(comment_event(3, MENTION, pull=True))),
    ("pull_request", offline(pull_request_event("opened", 4, MENTION))),
    ("pull_request", offline(pull_request_event("closed", 5))),
    ("issues", offline(issues_event("closed", 6))),
]
# Text no workflow can carry, where a parsed event takes it from: always among the examples.
UNUSABLE = [
    ("issue_comment", comment_event(8, MENTION + " \ud800")),
    ("issue_comment", comment_event(8, MENTION + " \x00")),
    ("issues", {**issues_event("opened", 9, MENTION), "repository": {**issues_event("opened", 9)["repository"],
                                                                      "html_url": URL + "\x00"}}),
    ("pull_request", pull_request_event("opened", 10, MENTION + "\udfff")),
]
EVENTS = ["issues", "issue_comment", "pull_request", "pull_request_review_comment", "push", "ping"]


@st.composite
def deliveries(draw: st.DrawFn) -> tuple[str, str, bytes]:
    """(X-GitHub-Event, content type, body): raw bytes, any JSON, or a mutated real event."""
    kind = draw(st.sampled_from(["bytes", "json", "mutated", "mutated", "mutated"]))
    event = draw(st.sampled_from(EVENTS))
    if kind == "bytes":
        return event, "application/json", draw(st.binary(max_size=64))
    if kind == "json":
        return event, "application/json", json.dumps(draw(json_values())).encode()
    event, payload = draw(st.sampled_from(VALID))
    body = json.dumps(draw(mutated([payload]))).encode()
    if draw(st.booleans()):  # GitHub's other content type: the JSON as the form field `payload`
        fields = {"payload": body.decode()} if draw(st.booleans()) else {draw(hostile_text()): body.decode()}
        return event, "application/x-www-form-urlencoded", urlencode(fields, errors="surrogatepass").encode()
    return event, "application/json", body


async def send(stack: Stack, event: str, content_type: str, body: bytes) -> httpx.Response:
    headers = {"content-type": content_type, "x-github-event": event, "x-github-delivery": str(uuid.uuid4()),
               **signed(body)}
    return await stack.api.post("/webhooks/github", content=body, headers=headers)


async def test_signed_garbage_never_gets_a_5xx_and_refused_bodies_start_nothing(stack: Stack, repo: Path) -> None:
    await stack.register(repo, url=URL)  # a mutated event that still parses finds this codebase, clones nothing
    unusable = [(event, "application/json", json.dumps(payload).encode()) for event, payload in UNUSABLE]
    confused = [(event, "application/json", json.dumps(payload).encode())
                for event, payload in VALID[2:4] for payload in type_confusions(payload)]
    drawn = draw_examples(deliveries(), 100)
    assert len(drawn) >= 80
    accepted: set[str] = set()
    refused = 0
    for number, (event, content_type, body) in enumerate(unusable + confused + drawn):
        response = await send(stack, event, content_type, body)
        assert response.status_code < 500, (event, body, response.text)
        if number < len(unusable):
            assert response.status_code == 400, response.text
            assert any(reason in response.text for reason in ("NUL character", "lone surrogate")), response.text
        if response.status_code == 202:
            # Named by the event's own ids: mutants of one event that keep them are one workflow.
            accepted.add(response.json()["workflow_id"])
            continue
        assert response.status_code in (200, 400), (event, body, response.text)
        if response.status_code == 400:
            refused += 1
            assert response.json()["detail"], "a refusal says why"
    assert refused >= 20 and accepted, f"the examples reach both sides: {refused} refused, {len(accepted)} taken"

    # A last, valid delivery: once Temporal lists it, it lists everything started before it.
    response = await send(stack, "issues", "application/json", json.dumps(issues_event("opened", 77, MENTION)).encode())
    assert response.status_code == 202, response.text
    accepted.add(response.json()["workflow_id"])
    assert await settled_workflows(stack, accepted) == accepted, "only the accepted deliveries started work"
