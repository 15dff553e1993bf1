"""The doctor's Socket Mode check: apps.connections.open with SLACK_APP_TOKEN through the real slack-sdk,
then the socket it names opened until Slack's `hello` and closed, against the fake Slack."""

from __future__ import annotations

import asyncio

from pydantic import SecretStr

from activities.doctor.platforms import platform_checks
from activities.doctor.slack import slack_socket as socket_check
from isolator.settings import Settings
from tests.fakes.slack_socket import FakeSlackSocket


async def test_the_right_token_opens_the_socket_and_closes_it(socket_settings: Settings,
                                                                slack_socket: FakeSlackSocket) -> None:
    check = await socket_check(socket_settings)
    assert check.ok, check.line()
    assert check.line() == ("OK    Slack: SLACK_APP_TOKEN (apps.connections.open, Socket Mode): the socket opens; "
                            "events come over it, no public URL needed")
    (connection,) = slack_socket.connections
    for _ in range(100):
        if not connection.open:
            break
        await asyncio.sleep(0.05)
    assert not connection.open, "the doctor's connection is closed again: Slack would send it envelopes"


async def test_a_wrong_token_is_said_with_its_fix(socket_settings: Settings, slack_socket: FakeSlackSocket) -> None:
    wrong = socket_settings.model_copy(update={"slack_app_token": SecretStr("xapp-1-revoked")})
    check = await socket_check(wrong)
    assert not check.ok
    assert check.problem == "Slack refuses the token (invalid_auth)"
    assert "connections:write" in check.fix and "SLACK_APP_TOKEN" in check.fix and "xapp-" in check.fix
    assert "xapp-1-revoked" not in check.line()
    assert slack_socket.connections == []


async def test_a_socket_that_does_not_open_is_said(socket_settings: Settings, slack_socket: FakeSlackSocket) -> None:
    await slack_socket.stop()  # apps.connections.open answers; its URL leads nowhere
    check = await socket_check(socket_settings)
    assert not check.ok and "the Socket Mode connection does not open" in check.problem
    assert "WebSockets" in check.fix


def test_the_check_runs_only_with_the_app_token(settings: Settings, socket_settings: Settings) -> None:
    def names(checks: list) -> list[str]:
        found = [check.cr_code.co_name for check in checks]
        for check in checks:
            check.close()
        return found

    assert "slack_socket" not in names(platform_checks(settings))
    assert "slack_socket" in names(platform_checks(socket_settings))
