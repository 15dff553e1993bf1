"""The whole stack for the browser tests: the app served by a real uvicorn on a free port (next to the
stack fixture's workers, PostgreSQL and Temporal), and Debian's chromium driven by Playwright.

Playwright's own browser download is never used: the system's chromium is launched by its path.
`make test` installs it when missing (apt-get install chromium); elsewhere the test fails saying so."""

from __future__ import annotations

import asyncio
import shutil
from contextlib import asynccontextmanager
from typing import AsyncIterator

import pytest
import uvicorn
from playwright.async_api import Browser, Page, async_playwright

from api.app import create_app
from tests.conftest import Stack, free_port

FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--no-first-run"]


def chromium_path() -> str:
    path = shutil.which("chromium")
    if path is None:
        pytest.fail("chromium is missing: these tests drive Debian's chromium; install it with "
                    "`apt-get install chromium` (`make test` does when it can)")
    return path


@asynccontextmanager
async def served(stack: Stack) -> AsyncIterator[str]:
    """The app on a real HTTP server; its base URL."""
    app = create_app(stack.settings, temporal=stack.temporal, pool=stack.db)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                           timeout_graceful_shutdown=2))
    serving = asyncio.create_task(server.serve())
    while not server.started:
        if serving.done():
            serving.result()
        await asyncio.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await serving


@asynccontextmanager
async def chromium() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=chromium_path(), headless=True, args=FLAGS)
        try:
            yield browser
        finally:
            await browser.close()


async def until(page: Page, expression: str, seconds: float = 60) -> object:
    """The expression's value once it is truthy, evaluated in the page (Playwright's own
    wait_for_function evaluates strings, which the dashboard's Content-Security-Policy forbids)."""
    for _ in range(int(seconds * 20)):
        value = await page.evaluate(expression)
        if value:
            return value
        await asyncio.sleep(0.05)
    raise AssertionError(f"{expression} did not hold within {seconds} s")
