"""Row 13: a dashboard session ends at its logout, in every API process, and at its expiry
(SESSION_HOURS); its cookie says how long it lasts, and is Secure when users reach the server over HTTPS."""

from __future__ import annotations

import httpx
import pytest
from pydantic import SecretStr

from api.app import create_app
from isolator.settings import Settings
from tests.conftest import Stack
from tests.security.http.dashboard_login import csrf_of, log_in, session_cookie, with_cookie

TOKEN = "session-token-8a4d27f0c3"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"api_token": SecretStr(TOKEN), "session_hours": 2.5,
                                       "public_url": "https://isolator.example.org"})


async def logged_in(stack: Stack) -> str:
    response = await log_in(stack.api, TOKEN)
    assert response.status_code == 303, response.text
    stack.api.cookies.clear()  # each request below says which cookie it replays
    return session_cookie(response)


async def test_the_cookie_lasts_the_session_and_is_secure_behind_https(stack: Stack) -> None:
    set_cookie = (await log_in(stack.api, TOKEN)).headers["set-cookie"].lower()
    for attribute in ("max-age=9000", "secure", "httponly", "samesite=strict", "path=/"):
        assert attribute in set_cookie.split("; "), set_cookie
    stack.settings.public_url = "http://isolator.example.org"
    assert "secure" not in (await log_in(stack.api, TOKEN)).headers["set-cookie"].lower().split("; ")


async def test_a_cookie_replayed_after_logout_is_refused_by_every_api_process(stack: Stack) -> None:
    cookie = await logged_in(stack)
    other_process = create_app(stack.settings, temporal=stack.temporal, pool=stack.db)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=other_process),
                                 base_url="http://isolator.test") as other:
        page = await stack.api.get("/", headers=with_cookie(cookie))
        assert page.status_code == 200 and (await other.get("/", headers=with_cookie(cookie))).status_code == 200
        assert cookie.partition(".")[0] not in str(await stack.db.fetch("SELECT * FROM dashboard_sessions"))

        out = await stack.api.post("/logout", data={"csrf": csrf_of(page)}, headers=with_cookie(cookie))
        assert out.status_code == 303 and out.headers["location"] == "/login"

        for api in (stack.api, other):
            replayed = await api.get("/", headers=with_cookie(cookie))
            assert replayed.status_code == 303 and replayed.headers["location"].startswith("/login"), replayed.text
            action = await api.post("/cleanup/run", data={"csrf": csrf_of(page)}, headers=with_cookie(cookie))
            assert action.status_code == 401 and "Log in first" in action.text


async def test_an_expired_session_is_refused(stack: Stack) -> None:
    cookie = await logged_in(stack)
    expires = await stack.db.fetchval("SELECT expires_at - created_at FROM dashboard_sessions")
    assert expires.total_seconds() == 2.5 * 3600
    assert (await stack.api.get("/", headers=with_cookie(cookie))).status_code == 200
    await stack.db.execute("UPDATE dashboard_sessions SET expires_at = now() - interval '1 second'")
    expired = await stack.api.get("/", headers=with_cookie(cookie))
    assert expired.status_code == 303 and expired.headers["location"].startswith("/login")
    await logged_in(stack)
    assert await stack.db.fetchval("SELECT count(*) FROM dashboard_sessions") == 1, "the expired row went"
