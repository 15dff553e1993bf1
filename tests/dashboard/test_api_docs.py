"""`/docs` in a real browser on a machine without the internet (this one's network is closed): the
Swagger UI's scripts and styles come from the service itself, and the page shows the API."""

from __future__ import annotations

import re

from tests.conftest import Stack
from tests.dashboard.browser import chromium, served, until


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
