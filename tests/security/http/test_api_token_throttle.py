"""Wrong bearer tokens at `/api` are throttled per client address, in one count with the dashboard's login:
after 5, the address is answered 429 with Retry-After and a one-line reason, without looking at its token,
for a lock-out that doubles with each further failure. A right token is never counted, and clears the
count; a request without a token is no guess, and is not counted."""

from __future__ import annotations

import asyncio

import httpx
import pytest
from pydantic import SecretStr

from api.app import create_app
from isolator.settings import Settings
from tests.conftest import Stack
from tests.security.http.dashboard_login import log_in

TOKEN = "api-throttle-token-7d41be90"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"api_token": SecretStr(TOKEN)})


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def runs_with(api: httpx.AsyncClient, token: str) -> httpx.Response:
    return await api.get("/api/runs", headers=bearer(token))


async def test_the_sixth_wrong_token_is_answered_429_until_the_lockout_ends(stack: Stack) -> None:
    for attempt in range(5):
        wrong = await runs_with(stack.api, f"guess-{attempt}")
        assert wrong.status_code == 401, wrong.text
    sixth = await runs_with(stack.api, "guess-6")
    assert sixth.status_code == 429 and sixth.headers["retry-after"] == "1", sixth.text
    assert sixth.json() == {"detail": "too many wrong API tokens from this address: try again in 1 s"}
    assert (await runs_with(stack.api, TOKEN)).status_code == 429, "locked out: the token is not even looked at"
    assert (await stack.api.post("/test/message", json={}, headers=bearer("guess"))).status_code == 429

    app = create_app(stack.settings, temporal=stack.temporal, pool=stack.db)
    transport = httpx.ASGITransport(app=app, client=("203.0.113.9", 40000))
    async with httpx.AsyncClient(transport=transport, base_url="http://isolator.test") as elsewhere:
        for _ in range(20):
            assert (await runs_with(elsewhere, TOKEN)).status_code == 200, "right tokens are never counted"
        assert (await runs_with(elsewhere, "guess")).status_code == 401, "another address has its own count"

    assert (await after_the_lockout(stack.api)).status_code == 200
    for attempt in range(5):
        assert (await runs_with(stack.api, f"again-{attempt}")).status_code == 401, "the success cleared the count"
    assert (await runs_with(stack.api, "again-6")).status_code == 429


async def test_a_request_without_a_token_is_not_counted(stack: Stack) -> None:
    for _ in range(10):
        refused = await stack.api.get("/api/runs")
        assert refused.status_code == 401 and "API_TOKEN" in refused.json()["detail"], refused.text
    assert (await runs_with(stack.api, "guess")).status_code == 401


async def test_the_login_and_the_api_share_one_count(stack: Stack) -> None:
    for attempt in range(3):
        assert (await log_in(stack.api, f"login-guess-{attempt}")).status_code == 401
    for attempt in range(2):
        assert (await runs_with(stack.api, f"api-guess-{attempt}")).status_code == 401
    assert (await runs_with(stack.api, "one-more")).status_code == 429
    assert (await log_in(stack.api, TOKEN)).status_code == 429


async def after_the_lockout(api: httpx.AsyncClient, seconds: float = 10) -> httpx.Response:
    """The right token's answer once the lock-out ends (each try before then is a 429 and costs nothing)."""
    for _ in range(int(seconds * 20)):
        answer = await runs_with(api, TOKEN)
        if answer.status_code != 429:
            return answer
        await asyncio.sleep(0.05)
    raise AssertionError(f"still locked out after {seconds} s")
