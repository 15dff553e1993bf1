"""Asking the human in the tests: the request a run sent (its buttons), a press on the test adapter,
and the runs of a conversation, read through the API as a user would."""

from __future__ import annotations

import asyncio

from isolator.contracts.approvals import parse_press_value
from tests.agent_runs import ENDED
from tests.conftest import Stack

RULE = "ask: Bash(git push:*), Bash(touch:*)"


def use_approvals(stack: Stack, rules: str = RULE) -> None:
    stack.settings.agent_approvals_line = rules


async def request_of(stack: Stack, conversation: str, after: int = 0, seconds: float = 90) -> dict:
    """The conversation's request with buttons (its `after`-th such message on), once sent: its text,
    buttons and code."""
    for _ in range(int(seconds * 20)):
        response = await stack.api.get(f"/test/messages/{conversation}")
        asked = [item for item in response.json()["messages"] if item.get("buttons")]
        if len(asked) > after:
            item = asked[after]
            pressed = parse_press_value(item["buttons"][0]["value"])
            assert pressed is not None, item
            return {"text": item["message"], "buttons": item["buttons"], "code": pressed.code}
        await asyncio.sleep(0.05)
    raise AssertionError(f"no request in {conversation}: {(await stack.replies(conversation))}")


async def press(stack: Stack, code: str, choice: str, user: str = "tester", **fields: object) -> tuple[int, dict]:
    response = await stack.api.post(f"/test/approvals/{code}", json={"choice": choice, "user": user, **fields})
    return response.status_code, response.json()


async def runs_of(stack: Stack, conversation: str) -> list[dict]:
    """Oldest first."""
    response = await stack.api.get("/api/runs", params={"conversation": f"test:{conversation}"})
    assert response.status_code == 200, response.text
    return list(reversed(response.json()))


async def runs_when_ended(stack: Stack, conversation: str, count: int, seconds: float = 90) -> list[dict]:
    """The conversation's runs once there are `count` and all have ended."""
    for _ in range(int(seconds * 20)):
        runs = await runs_of(stack, conversation)
        if len(runs) >= count and all(run["status"] in ENDED for run in runs):
            return runs
        await asyncio.sleep(0.05)
    raise AssertionError(f"runs of {conversation}: {[(run['status'], run['message'][:40]) for run in runs]}")


async def approval(stack: Stack, code: str) -> dict:
    listed = (await stack.api.get("/api/approvals")).json()
    return next(item for item in listed if item["code"] == code)
