"""A request's buttons pressed over Socket Mode: `interactive` envelopes from the fake Slack's WebSocket
server into the service's socket client, answered through the webhook's own press path on real
PostgreSQL and Temporal, the environment's workflow a stand-in that keeps the answers."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import asyncpg
from temporalio.client import Client

from activities.chat.platforms.slack import make_deliverer
from isolator.contracts.approvals import Button, press_value
from isolator.contracts.message import ReplyInput
from isolator.settings import Settings
from tests.approvals import answers_of, recorded_request, waiting_environment  # noqa: F401 - a fixture
from tests.fakes.slack_api import Ephemeral, FakeSlack, Post
from tests.fakes.slack_socket import FakeSlackSocket
from tests.platforms.slack import CHANNEL, USER, block_actions, buttons, request_message
from tests.platforms.slack_socket import socket_client

THREAD = "1700000000.000100"
OPTIONS = [Button("Postgres", press_value("Q4ANSW", "option", 0)), Button("SQLite", press_value("Q4ANSW", "option", 1))]


async def asked(settings: Settings, fake: FakeSlack, db: asyncpg.Pool) -> tuple[str, Post]:
    """A question waiting for USER's answer, posted with its buttons; its environment's id and message."""
    environment = await recorded_request(db, "slack", f"{CHANNEL}:{THREAD}", "Q4ANSW", requested_by=USER,
                                         kind="question")
    await make_deliverer(settings)(ReplyInput("slack", f"{CHANNEL}:{THREAD}", "Which database?",
                                              idempotency_key=f"ask-{uuid.uuid4()}", buttons=OPTIONS))
    return environment, request_message(fake)


def pressed(message: Post, label: str) -> dict[str, Any]:
    button = next(item for item in buttons(message.blocks or []) if item["text"]["text"] == label)
    return block_actions(message, button)


async def test_a_press_over_the_socket_answers_the_request_after_its_acknowledgement(
    socket_settings: Settings, fake: FakeSlack, slack_socket: FakeSlackSocket, db: asyncpg.Pool, temporal: Client,
    waiting_environment: Any,
) -> None:
    environment, message = await asked(socket_settings, fake, db)
    handle = await waiting_environment(environment)
    async with socket_client(socket_settings, temporal, db):
        await slack_socket.connection()
        envelope = await slack_socket.send("interactive", pressed(message, "SQLite"))
        ack = await slack_socket.acked(envelope)
        assert ack.payload is None and ack.at - slack_socket.sent_at[envelope] < 3
        (decision,) = await answers_of(handle)
    assert (decision.choice, decision.option, decision.by) == ("option", 1, f"<@{USER}>")
    assert fake.ephemerals == []


async def test_a_press_sent_to_two_processes_is_answered_once(
    socket_settings: Settings, fake: FakeSlack, slack_socket: FakeSlackSocket, db: asyncpg.Pool, temporal: Client,
    waiting_environment: Any,
) -> None:
    environment, message = await asked(socket_settings, fake, db)
    handle = await waiting_environment(environment)
    async with socket_client(socket_settings, temporal, db), socket_client(socket_settings, temporal, db):
        one, two = await slack_socket.connection(number=1), await slack_socket.connection(number=2)
        envelope = await slack_socket.send("interactive", pressed(message, "Postgres"), to=one)
        await slack_socket.resend(envelope, to=two)
        await asyncio.gather(slack_socket.acked(envelope), answers_of(handle))
        for _ in range(40):
            if len(slack_socket.acks_of(envelope)) == 2:
                break
            await asyncio.sleep(0.05)
        await asyncio.sleep(1)  # time for a second answer to show
        answers = await handle.query("answers")
    assert len(answers) == 1, answers
    assert len(slack_socket.acks_of(envelope)) == 2, "both processes acknowledge what they were sent"


async def test_a_press_of_an_unknown_request_is_told_to_the_presser_alone(
    socket_settings: Settings, fake: FakeSlack, slack_socket: FakeSlackSocket, db: asyncpg.Pool, temporal: Client,
) -> None:
    await make_deliverer(socket_settings)(ReplyInput("slack", f"{CHANNEL}:{THREAD}", "Which database?",
                                                     idempotency_key="ask", buttons=OPTIONS))
    async with socket_client(socket_settings, temporal, db):
        await slack_socket.connection()
        await slack_socket.acked(await slack_socket.send("interactive", pressed(request_message(fake), "SQLite")))
        for _ in range(200):
            if fake.ephemerals:
                break
            await asyncio.sleep(0.05)
    assert fake.ephemerals == [Ephemeral(CHANNEL, USER, THREAD, "There is no request `Q4ANSW` waiting here.")]
