"""`/docs` in a real browser on a machine without the internet (this one's network is closed): the
Swagger UI's scripts and styles come from the service itself, and the page shows the API."""

from __future__ import annotations

import re

from pydantic import SecretStr

from tests.conftest import Stack
from tests.dashboard.browser import chromium, served, until

TOKEN = "docs-token-5b0e2d81c4"


async def test_the_api_docs_render_with_no_request_leaving_the_machine(stack: Stack) -> None:
    async with served(stack) as base, chromium() as browser:
        page = await browser.new_page()
        requested: list[str] = []
        page.on("request", lambda request: requested.append(request.url))

        await page.goto(f"{base}/docs")
        title = await until(page, "document.querySelector('.swagger-ui .info .title')?.textContent")
        operations = await until(page, "document.querySelectorAll('.opblock').length")

    assert "isolator" in str(title)
    assert int(str(operations)) > 5, "the API's routes are listed"
    assert requested and all(url.startswith(base) for url in requested), [
        url for url in requested if not url.startswith(base)]
    assert any(re.search(r"/static-offline-docs/swagger-ui-bundle\.js$", url) for url in requested)


async def test_with_api_token_the_docs_take_the_dashboards_login_and_show_the_api(stack: Stack) -> None:
    stack.settings.api_token = SecretStr(TOKEN)
    async with served(stack) as base, chromium() as browser:
        page = await browser.new_page()
        await page.goto(f"{base}/docs")
        assert page.url == f"{base}/login?next=%2Fdocs", "no session, no token: to the login form"
        await page.fill("input[name=token]", TOKEN)
        await page.click("button[type=submit]")
        await until(page, "location.pathname === '/docs'")
        operations = await until(page, "document.querySelectorAll('.opblock').length")
    assert int(str(operations)) > 5, "the page's script read the schema with the session's cookie"
