"""The dashboard with API_TOKEN set, in a real browser against the whole stack: no page and no action
without the token, the session cookie is HttpOnly and SameSite=Strict, an action without the CSRF token
is refused, and so is a form posted from another site, even one that carries a valid CSRF token."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from pydantic import SecretStr

from isolator.settings import Settings
from tests.conftest import Stack
from tests.dashboard.browser import chromium, served

TOKEN = "dashboard-test-token-7f3a"
EVIL = "http://evil.example"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"api_token": SecretStr(TOKEN), "agent_command_line": ""})


async def test_without_the_token_nothing_is_shown_or_done(stack: Stack, repo: Path) -> None:
    stack.api.headers["Authorization"] = f"Bearer {TOKEN}"
    await stack.register(repo)
    environment = (await stack.say("sec-a"))["result"]
    environment_page = f"/environments/{environment['environmentId']}"
    async with served(stack) as base, httpx.AsyncClient(base_url=base) as stranger:
        for path in ("/", "/codebases/project", environment_page, "/cleanup", f"/runs/{environment['environmentId']}/events"):
            response = await stranger.get(path)
            assert response.status_code == 303 and response.headers["location"].startswith("/login?next="), path
        for path in (f"{environment_page}/remove", f"{environment_page}/setup", "/cleanup/run"):
            refused = await stranger.post(path, data={"force": "on"}, headers={"Origin": base})
            assert refused.status_code == 401 and "Log in first" in refused.text, path
        wrong = await stranger.post("/login", data={"token": "guess", "next": "/"}, headers={"Origin": base})
        assert wrong.status_code == 401 and "set-cookie" not in wrong.headers
        assert (await stranger.get("/api/environments")).status_code == 401

        async with chromium() as browser:
            context = await browser.new_context()
            page = await context.new_page()
            await page.goto(f"{base}/codebases/project")
            await page.fill("input[name=token]", "not it")
            await page.click("button[type=submit]")
            assert await page.locator("#wrong-token").count() == 1
            await page.fill("input[name=token]", TOKEN)
            await page.click("button[type=submit]")
            await page.wait_for_selector("table.environments")  # back where it was going
            assert page.url == f"{base}/codebases/project"
            [cookie] = await context.cookies()
            assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"

            # an action without the CSRF token, from the dashboard's own page and session
            status = await page.evaluate(
                """path => fetch(path, {method: "POST", body: new URLSearchParams({force: "on"})}).then(r => r.status)""",
                f"{environment_page}/remove")
            assert status == 403

            # a cross-site form post, even with the session's valid CSRF token
            await page.goto(f"{base}{environment_page}/remove")
            csrf = await page.get_attribute("input[name=csrf]", "value")
            await context.route(f"{EVIL}/**", lambda route: route.fulfill(content_type="text/html", body=f"""
                <form method="post" action="{base}{environment_page}/remove">
                  <input name="csrf" value="{csrf}"><input name="force" value="on"></form>
                <script>document.forms[0].submit()</script>"""))
            await page.goto(f"{EVIL}/prize")
            await page.wait_for_url(f"{base}{environment_page}/remove")
            assert "Refused" in await page.text_content("h1")

    row = await stack.db.fetchrow("SELECT status FROM isolation_environments WHERE id = $1", environment["environmentId"])
    assert row["status"] == "active" and Path(environment["workingPath"]).is_dir(), "nothing was removed"
