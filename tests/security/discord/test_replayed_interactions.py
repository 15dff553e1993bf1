"""A Discord interaction replayed: the same signed body posted again (with the same signature and timestamp,
which is all a replay can send) is the same interaction, and starts nothing (docs/platforms.md#redeliveries)."""

from __future__ import annotations

import json
from pathlib import Path

from isolator.contracts.approvals import press_value
from tests.agents import command
from tests.approvals import conversation_runs_when_ended
from tests.conftest import Stack
from tests.fakes.discord_api import CHANNEL_ID, FakeDiscord, SentMessage
from tests.platforms.discord import button_press, post, resolution, signed, slash_command

ONLY_TO_THEM = 1 << 6


async def test_a_replayed_command_runs_the_agent_once_and_the_next_command_runs_too(
        stack: Stack, fake: FakeDiscord, repo: Path, tmp_path: Path) -> None:
    stack.settings.agent_command_line = command("recorder", str(tmp_path / "runs.log"), "0")
    await stack.register(repo)
    first = slash_command("fix the login")
    fake.expect_interaction(first["token"])
    body = json.dumps(first).encode()
    headers = signed(body)
    for _ in range(2):
        response = await post(stack, body, headers)
        assert (response.status_code, response.json()) == (200, {"type": 5}), response.text
    await resolution(stack, f"interaction:{first['id']}")
    # A second command, queued after whatever the replay queued: once it has run, every run has.
    second = slash_command("and the logout")
    fake.expect_interaction(second["token"])
    assert (await post(stack, second)).json() == {"type": 5}
    await resolution(stack, f"interaction:{second['id']}")

    runs = await conversation_runs_when_ended(stack, f"discord:{CHANNEL_ID}", 2)
    assert [run["message"] for run in runs] == ["fix the login", "and the logout"]


async def test_a_replayed_press_is_answered_once_and_the_next_press_is_answered_too(
        stack: Stack, fake: FakeDiscord) -> None:
    request = SentMessage(CHANNEL_ID, "1300000000000000041", "May the agent run `git push`?", components=[
        {"type": 1, "components": [{"type": 2, "style": 3, "label": "Allow once",
                                    "custom_id": press_value("NOPE12", "once")}]}])
    body = json.dumps(button_press(request, "Allow once")).encode()
    headers = signed(body)
    unknown = {"type": 4, "data": {"content": "There is no request `NOPE12` waiting here.", "flags": ONLY_TO_THEM}}
    first, replayed = [(await post(stack, body, headers)) for _ in range(2)]
    assert first.json() == unknown, first.text
    assert replayed.json() == {"type": 6}, "the replay is acknowledged, and tells nobody anything"

    # The same button pressed again is another interaction, and is answered.
    assert (await post(stack, button_press(request, "Allow once"))).json() == unknown
