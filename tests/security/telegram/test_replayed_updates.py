"""A Telegram update replayed: the same body posted again with the webhook's secret is the same update (the
same `update_id`; a press, the same callback query), and starts nothing (docs/platforms.md#redeliveries)."""

from __future__ import annotations

import uuid
from pathlib import Path

from isolator.contracts.approvals import press_value
from tests.agents import command
from tests.approvals import conversation_runs_when_ended
from tests.conftest import Stack
from tests.fakes.telegram_api import FakeTelegram, Sent
from tests.platforms.telegram import (
    PRIVATE,
    USER,
    callback_query,
    message,
    post,
    resolution,
    send,
)


def new_update_id() -> int:
    return uuid.uuid4().int % 10**9


async def test_a_replayed_message_runs_the_agent_once_and_the_next_message_runs_too(
        stack: Stack, fake: FakeTelegram, repo: Path, tmp_path: Path) -> None:
    stack.settings.agent_command_line = command("recorder", str(tmp_path / "runs.log"), "0")
    await stack.register(repo)
    update = {"update_id": new_update_id(), "message": message("fix the login")}
    for _ in range(2):
        assert (await post(stack, update)).status_code == 200
    await resolution(stack, update["update_id"])
    # A second message, queued after whatever the replay queued: once it has run, every run has.
    await resolution(stack, await send(stack, update_id=new_update_id(), message=message("and the logout")))

    runs = await conversation_runs_when_ended(stack, f"telegram:{PRIVATE['id']}:0", 2)
    assert [run["message"] for run in runs] == ["fix the login", "and the logout"]


async def test_a_replayed_press_is_answered_once_and_the_next_press_is_answered_too(
        stack: Stack, fake: FakeTelegram) -> None:
    request = Sent(PRIVATE["id"], None, "May the agent run `git push`?", message_id=41)
    update = {"update_id": new_update_id(),
              "callback_query": callback_query(request, press_value("NOPE12", "once"), USER["id"], USER["username"])}
    for _ in range(2):
        assert (await post(stack, update)).status_code == 200
    unknown = "There is no request NOPE12 waiting here."  # an alert is plain text: no backticks
    assert [answer.text for answer in fake.callback_answers] == [unknown], "the replay told nobody anything"

    # The same button pressed again is another callback query, in another update, and is answered.
    again = {"update_id": new_update_id(),
             "callback_query": callback_query(request, press_value("NOPE12", "once"), USER["id"], USER["username"])}
    assert (await post(stack, again)).status_code == 200
    assert [answer.text for answer in fake.callback_answers] == [unknown, unknown]
