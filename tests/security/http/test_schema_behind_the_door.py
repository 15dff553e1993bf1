"""The API's schema and its pages (`/openapi.json`, `/docs`, `/redoc`) are behind the API's own door: with
API_TOKEN, its bearer token or the dashboard's login; without, this machine's loopback only."""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import AsyncIterator

import httpx
import pytest
from pydantic import SecretStr

from api.app import create_app
from isolator.settings import Settings
from tests.conftest import Stack
from tests.security.http.dashboard_login import log_in, session_cookie, with_cookie

TOKEN = "schema-token-3f9a1c07e2"
PAGES = ("/docs", "/redoc")
ELSEWHERE = "203.0.113.9"  # another host than the server's


@asynccontextmanager
async def client_of(stack: Stack, settings: Settings, address: str) -> AsyncIterator[httpx.AsyncClient]:
    """A client at `address` of an app made with `settings`."""
    app = create_app(settings, temporal=stack.temporal, pool=stack.db)
    transport = httpx.ASGITransport(app=app, client=(address, 40000))
    async with httpx.AsyncClient(transport=transport, base_url="http://isolator.test") as client:
        yield client


async def test_without_api_token_the_schema_answers_loopback_clients_only(stack: Stack) -> None:
    async with client_of(stack, stack.settings, ELSEWHERE) as remote:
        for path in ("/openapi.json", *PAGES):
            refused = await remote.get(path)
            assert refused.status_code == 403, (path, refused.status_code)  # the body would be the whole schema
            assert "API_TOKEN is unset" in refused.json()["detail"]
    schema = await stack.api.get("/openapi.json")
    assert schema.status_code == 200 and "/api/codebases" in schema.json()["paths"]
    page = await stack.api.get("/docs")
    assert page.status_code == 200 and "/openapi.json" in page.text and "/static-offline-docs/" in page.text
    assert (await stack.api.get("/static-offline-docs/swagger-ui-bundle.js")).status_code == 200


@pytest.mark.parametrize("address", ["127.0.0.1", ELSEWHERE])
async def test_with_api_token_the_schema_needs_the_token_or_a_login(stack: Stack, address: str) -> None:
    settings = stack.settings.model_copy(update={"api_token": SecretStr(TOKEN)})
    async with client_of(stack, settings, address) as api:
        nothing, wrong = await api.get("/openapi.json"), await api.get("/openapi.json", headers=_bearer("wrong"))
        for refused in (nothing, wrong):
            assert refused.status_code == 401, refused.status_code
            assert "API_TOKEN" in refused.json()["detail"]
        for path in PAGES:
            to_login = await api.get(path)
            assert to_login.status_code == 303 and to_login.headers["location"] == f"/login?next=%2F{path[1:]}"
            assert (await api.get(path, headers=_bearer("wrong"))).status_code == 401

        with_token = await api.get("/openapi.json", headers=_bearer(TOKEN))
        assert with_token.status_code == 200 and "/api/runs" in with_token.json()["paths"]
        assert (await api.get("/docs", headers=_bearer(TOKEN))).status_code == 200

        cookie = session_cookie(await log_in(api, TOKEN))
        for path in ("/openapi.json", *PAGES):
            assert (await api.get(path, headers=with_cookie(cookie))).status_code == 200, path
        forged = await api.get("/openapi.json", headers=with_cookie(cookie[:-2] + "xx"))
        assert forged.status_code == 401, "a cookie that is not the session's own is no login"


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}
