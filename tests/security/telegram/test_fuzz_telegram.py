"""Fuzzing the Telegram webhook with the right secret: never a 5xx, and nothing started for a body
the webhook refuses."""

from __future__ import annotations

import json
import time
from pathlib import Path

from isolator.contracts.message import message_workflow_id
from tests.conftest import Stack
from tests.fakes.telegram_api import BOT_USER
from tests.platforms.telegram import GROUP, _update_ids, in_topic, message, post
from tests.security.fuzzing import (
    bodies,
    draw_examples,
    settled_workflows,
    type_confusions,
    workflow_exists,
)

BASE_ID = 1
BOTS_MESSAGE = {"message_id": 7, "from": BOT_USER, "chat": GROUP, "date": int(time.time()), "text": "Working in…"}
VALID = [
    {"update_id": BASE_ID, "message": message("fix the login bug")},
    {"update_id": BASE_ID, "message": message("@isolator /status", GROUP)},
    {"update_id": BASE_ID, "message": message("/worktree list@isolator", GROUP)},
    {"update_id": BASE_ID, "message": in_topic("@isolator in the topic", 42)},
    {"update_id": BASE_ID, "message": message("and the tests", GROUP, reply_to_message=BOTS_MESSAGE)},
    {"update_id": BASE_ID, "edited_message": message("edited")},
]
# Text no workflow can carry: always among the examples, always refused.
UNUSABLE = [
    {"update_id": BASE_ID, "message": message("/worktree create \ud800")},
    {"update_id": BASE_ID, "message": message("@isolator \udfff hi", GROUP)},  # its mention entity is counted
    {"update_id": BASE_ID, "message": message("/worktree create a\x00b")},
]


def fresh(body: bytes) -> tuple[bytes, str | None]:
    """The body with a new update_id (each example its own workflow), and that workflow's id if it has one."""
    try:
        payload = json.loads(body)
    except ValueError:
        return body, None
    if not isinstance(payload, dict):
        return body, None
    if payload.get("update_id") == BASE_ID:
        payload["update_id"] = next(_update_ids)
        body = json.dumps(payload).encode()
    update_id = payload.get("update_id")
    return body, message_workflow_id("telegram", str(update_id)) if type(update_id) is int else None


async def test_garbage_with_the_secret_never_gets_a_5xx_and_refused_bodies_start_nothing(
    stack: Stack, repo: Path
) -> None:
    await stack.register(repo)
    unusable = [json.dumps(payload).encode() for payload in UNUSABLE]
    confused = [json.dumps(payload).encode() for payload in type_confusions(VALID[3]) + type_confusions(VALID[4])]
    drawn = draw_examples(bodies(VALID), 100)
    assert len(drawn) >= 80
    accepted: set[str] = set()
    refused = 0
    for number, original in enumerate(unusable + confused + drawn):
        body, workflow_id = fresh(original)
        response = await post(stack, body)
        assert response.status_code < 500, (body, response.text)
        if number < len(unusable):
            assert response.status_code == 400, response.text
            assert any(reason in response.text for reason in ("NUL character", "lone surrogate")), response.text
        if response.status_code == 200 and "workflowId" in response.json():
            assert response.json()["workflowId"] == workflow_id
            accepted.add(workflow_id)
            continue
        assert response.status_code in (200, 400), (body, response.text)
        assert response.json()["ok"] is (response.status_code == 200)
        if response.status_code == 400:
            refused += 1
            assert response.json()["detail"], "a refusal says why"
        if workflow_id:
            assert not await workflow_exists(stack, workflow_id), (body, response.text)
    assert refused >= 20 and len(accepted) >= 5, f"both sides reached: {refused} refused, {len(accepted)} taken"

    # A last, valid update: once Temporal lists it, it lists everything started before it.
    response = await post(stack, {"update_id": next(_update_ids), "message": message("hello")})
    assert response.status_code == 200, response.text
    accepted.add(response.json()["workflowId"])
    assert await settled_workflows(stack, accepted) == accepted, "only the accepted updates started work"
