"""Row 12: wrong tokens at the dashboard's login. After 5 failures from one address, it answers 429 with
Retry-After, without looking at the token, for a lock-out that doubles with each further failure; a
right token after the lock-out works, and clears the count."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from pydantic import SecretStr

from api.app import create_app
from api.throttle import LONGEST_LOCKOUT_SECONDS, TokenThrottle
from isolator.settings import Settings
from tests.conftest import Stack
from tests.security.http.dashboard_login import log_in

TOKEN = "throttled-token-0e6b93c1f2"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"api_token": SecretStr(TOKEN)})


async def failures_until_locked(api: httpx.AsyncClient) -> int:
    for attempt in range(1, 41):
        if (await log_in(api, f"guess-{attempt}")).status_code == 429:
            return attempt
    raise AssertionError("40 wrong tokens in a row, never locked out")


async def after_the_lockout(api: httpx.AsyncClient, seconds: float = 10) -> httpx.Response:
    """The right token's answer once the lock-out ends (each try before then is a 429 and costs nothing)."""
    for _ in range(int(seconds * 20)):
        answer = await log_in(api, TOKEN)
        if answer.status_code != 429:
            return answer
        await asyncio.sleep(0.05)
    raise AssertionError(f"still locked out after {seconds} s")


async def test_the_sixth_wrong_token_is_answered_429_until_the_lockout_ends(stack: Stack) -> None:
    answers = [await log_in(stack.api, f"guess-{attempt}") for attempt in range(5)]
    assert [answer.status_code for answer in answers] == [401] * 5
    sixth = await log_in(stack.api, "guess-6")
    assert sixth.status_code == 429 and sixth.headers["retry-after"] == "1", sixth.text
    assert "try again in 1 s" in sixth.text
    right_but_locked = await log_in(stack.api, TOKEN)
    assert right_but_locked.status_code == 429 and "set-cookie" not in right_but_locked.headers

    app = create_app(stack.settings, temporal=stack.temporal, pool=stack.db)
    transport = httpx.ASGITransport(app=app, client=("203.0.113.9", 40000))
    async with httpx.AsyncClient(transport=transport, base_url="http://isolator.test") as elsewhere:
        assert (await log_in(elsewhere, "guess")).status_code == 401, "another address has its own count"

    logged_in = await after_the_lockout(stack.api)
    assert logged_in.status_code == 303 and "isolator_session=" in logged_in.headers["set-cookie"]
    stack.api.cookies.clear()
    assert await failures_until_locked(stack.api) == 6, "the success cleared the count: 5 free failures again"


def test_each_further_failure_doubles_the_lockout_up_to_its_cap() -> None:
    now = [1000.0]
    throttle = TokenThrottle(clock=lambda: now[0])
    lockouts = []
    for _ in range(16):
        throttle.failed("198.51.100.7")
        lockouts.append(throttle.locked_for("198.51.100.7"))
        now[0] += lockouts[-1]
    assert lockouts[:4] == [0, 0, 0, 0]
    assert lockouts[4:9] == [1, 2, 4, 8, 16] and lockouts[-1] == LONGEST_LOCKOUT_SECONDS
    assert throttle.locked_for("198.51.100.8") == 0
    throttle.succeeded("198.51.100.7")
    throttle.failed("198.51.100.7")
    assert throttle.locked_for("198.51.100.7") == 0, "a success starts the count again"

    for _ in range(5):
        throttle.failed("2001:db8:1:2::10")
    assert throttle.locked_for("2001:db8:1:2::99") == 1, "one IPv6 /64, one count"
    now[0] += 2 * 3600
    assert throttle.locked_for("2001:db8:1:2::10") == 0 and "2001:db8:1:2::/64" not in throttle.failures
