"""Dependencies shared by the routers: settings, clients, and the API token check.

All `async def`: FastAPI runs a plain `def` dependency in its thread pool, a thread hop per request
for what is an attribute lookup.
"""

from __future__ import annotations

import ipaddress
import logging
import math
import secrets

import asyncpg
from fastapi import HTTPException, Request, status
from pydantic import SecretStr
from temporalio.client import Client

from api.throttle import TokenThrottle
from isolator.settings import Settings

log = logging.getLogger(__name__)


async def get_settings(request: Request) -> Settings:
    return request.app.state.settings


async def get_client(request: Request) -> Client:
    return request.app.state.temporal


async def get_pool(request: Request) -> asyncpg.Pool:
    return request.app.state.pool


def token_throttle(request: Request) -> TokenThrottle:
    return request.app.state.token_throttle


def client_address(request: Request) -> str:
    return request.client.host if request.client else ""


def is_loopback_client(request: Request) -> bool:
    try:
        return ipaddress.ip_address(client_address(request)).is_loopback
    except ValueError:
        return False


async def require_api_token(request: Request) -> None:
    """`/api` and `/test` require `Authorization: Bearer $API_TOKEN` when API_TOKEN is set; without it, they
    answer only loopback clients, as the dashboard does. Wrong tokens are throttled per client address
    (api/throttle.py); a request without any is not a guess, and is not counted."""
    expected = (await get_settings(request)).api_token
    if expected is None:
        if not is_loopback_client(request):
            log.warning("%s %s refused: API_TOKEN is unset and the client is not on loopback", request.method,
                        request.url.path)
            raise HTTPException(status.HTTP_403_FORBIDDEN,
                                detail="API_TOKEN is unset: this API answers only this machine's loopback address")
        return
    check_bearer(request, expected, "API token", "API_TOKEN")


def check_bearer(request: Request, expected: SecretStr, noun: str, variable: str) -> None:
    """`Authorization: Bearer <variable>`, compared in constant time; wrong ones are throttled per client
    address (api/throttle.py), a request without any is not a guess and is not counted."""
    throttle, address = token_throttle(request), client_address(request)
    if locked_for := math.ceil(throttle.locked_for(address)):
        log.warning("%s %s refused: %s is locked out for %d s after wrong %ss", request.method,
                    request.url.path, address, locked_for, noun)
        raise HTTPException(status.HTTP_429_TOO_MANY_REQUESTS, headers={"Retry-After": str(locked_for)},
                            detail=f"too many wrong {noun}s from this address: try again in {locked_for} s")
    given = request.headers.get("authorization")
    scheme, _, token = (given or "").partition(" ")
    if scheme.lower() == "bearer" and secrets.compare_digest(token.encode(), expected.get_secret_value().encode()):
        throttle.succeeded(address)
        return
    if given is not None:
        throttle.failed(address)
    log.warning("%s %s refused: missing or wrong %s", request.method, request.url.path, noun)  # never the token
    raise HTTPException(
        status.HTTP_401_UNAUTHORIZED,
        detail=f"missing or wrong {noun}: send `Authorization: Bearer <{variable}>`",
        headers={"WWW-Authenticate": "Bearer"},
    )
