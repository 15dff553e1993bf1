"""Driving the dashboard's login as a browser does, for the tests of this folder."""

from __future__ import annotations

import re

import httpx

from api.dashboard.access import COOKIE

ORIGIN = "http://isolator.test"  # the stack's client's base URL, which its settings' ALLOWED_HOSTS names


async def log_in(api: httpx.AsyncClient, token: str) -> httpx.Response:
    return await api.post("/login", data={"token": token, "next": "/"}, headers={"Origin": ORIGIN})


def session_cookie(response: httpx.Response) -> str:
    """The session cookie's value, from the login's `Set-Cookie`."""
    match = re.search(rf"{COOKIE}=([^;]+)", response.headers.get("set-cookie", ""))
    assert match, f"no session cookie: {response.status_code} {response.headers}"
    return match[1]


def with_cookie(cookie: str) -> dict[str, str]:
    return {"Cookie": f"{COOKIE}={cookie}", "Origin": ORIGIN}


def csrf_of(page: httpx.Response) -> str:
    match = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert match, page.text[:2000]
    return match[1]
