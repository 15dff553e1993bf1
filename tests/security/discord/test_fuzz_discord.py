"""Fuzzing the Discord Interactions endpoint with correctly signed bodies: never a 5xx, and nothing
started for a body the endpoint refuses or answers itself."""

from __future__ import annotations

import json
from pathlib import Path

from isolator.contracts.message import message_workflow_id
from tests.conftest import Stack
from tests.platforms.discord import _interaction_ids, post, slash_command
from tests.security.fuzzing import (
    bodies,
    draw_examples,
    settled_workflows,
    type_confusions,
    workflow_exists,
)

BASE_ID = "1"
VALID = [
    slash_command("fix the login bug", id=BASE_ID),
    slash_command("worktree list", id=BASE_ID, channel_id="1300000000000000042"),
    slash_command(None, id=BASE_ID),
    {"type": 1, "id": BASE_ID, "application_id": "2", "token": "t"},
    {**slash_command("x", id=BASE_ID), "type": 3, "data": {"custom_id": "button", "component_type": 2}},
]
# Text no workflow can carry: always among the examples, always refused with a reason for the user.
UNUSABLE = [slash_command("worktree create \ud800", id=BASE_ID), slash_command("fix a\x00b", id=BASE_ID)]


def fresh(body: bytes) -> tuple[bytes, str | None]:
    """The body with a new interaction id (each example its own workflow), and that workflow's id if it has one."""
    try:
        payload = json.loads(body)
    except ValueError:
        return body, None
    if not isinstance(payload, dict):
        return body, None
    if payload.get("id") == BASE_ID:
        payload["id"] = str(next(_interaction_ids))
        body = json.dumps(payload).encode()
    interaction_id = payload.get("id")
    if not isinstance(interaction_id, str) or not _encodable(interaction_id):  # no workflow could bear its id
        return body, None
    return body, message_workflow_id("discord", f"interaction:{interaction_id}")


def _encodable(text: str) -> bool:
    try:
        text.encode()
    except UnicodeEncodeError:  # a lone surrogate
        return False
    return True


async def test_signed_garbage_never_gets_a_5xx_and_refused_bodies_start_nothing(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    unusable = [json.dumps(payload).encode() for payload in UNUSABLE]
    confused = [json.dumps(payload).encode() for payload in type_confusions(VALID[1])]
    drawn = draw_examples(bodies(VALID), 100)
    assert len(drawn) >= 80
    deferred: set[str] = set()
    refused = 0
    for number, original in enumerate(unusable + confused + drawn):
        body, workflow_id = fresh(original)
        response = await post(stack, body)
        assert response.status_code < 500, (body, response.text)
        if number < len(unusable):
            assert response.json()["type"] == 4, response.text
            assert any(reason in response.text for reason in ("NUL character", "lone surrogate")), response.text
        if response.status_code == 200 and response.json() == {"type": 5}:
            assert workflow_id is not None
            deferred.add(workflow_id)
            continue
        if response.status_code == 200:  # a PONG, or an answer for the user's eyes only
            assert response.json()["type"] in (1, 4), response.text
        else:
            assert response.status_code == 400 and response.json()["detail"], (body, response.text)
            refused += 1
        if workflow_id and workflow_id not in deferred:
            assert not await workflow_exists(stack, workflow_id), (body, response.text)
    assert refused >= 20 and len(deferred) >= 5, f"both sides reached: {refused} refused, {len(deferred)} taken"

    # A last, valid command: once Temporal lists it, it lists everything started before it.
    last = slash_command("status")
    assert (await post(stack, last)).json() == {"type": 5}
    sentinel = message_workflow_id("discord", f"interaction:{last['id']}")
    listed = await settled_workflows(stack, [sentinel])
    assert listed <= deferred | {sentinel}, f"started for a refused body: {sorted(listed - deferred)}"
