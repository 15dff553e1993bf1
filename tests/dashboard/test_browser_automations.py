"""The Automations page's buttons in a real browser against the whole stack (issue 51): Pause shows the
automation paused and pauses its Temporal Schedule, Resume starts it again, and Run now starts a firing
that shows on the page with its run."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.async_api import Page

from activities.automations.schedules import schedule_id
from isolator.settings import Settings
from tests.agents import command
from tests.automations_made import make_automations
from tests.conftest import Stack
from tests.dashboard.browser import chromium, served, until

ROW = "document.querySelector('tr[data-name=nightly]')"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"agent_command_line": command("ticker", "2", "0.05")})


async def _press(page: Page, base: str, label: str) -> str:
    """The button's outcome, then the page again (by the outcome's link back)."""
    await page.goto(f"{base}/automations")
    await page.click(f"tr[data-name=nightly] button:text-is('{label}')")
    outcome = await page.text_content("#outcome") or ""
    await page.click("#back")
    return outcome


async def test_pause_resume_and_run_now_in_chromium(stack: Stack, repo: Path) -> None:
    await make_automations(stack, repo)
    schedule = stack.temporal.get_schedule_handle(schedule_id("nightly"))
    async with served(stack) as base, chromium() as browser:
        page = await browser.new_page()
        page.set_default_timeout(60_000)
        await page.goto(f"{base}/")
        await page.click("header nav a:text-is('Automations')")
        assert "next firing" in (await page.text_content("#automations thead") or "").lower()

        assert "Paused nightly" in await _press(page, base, "Pause")
        assert "paused by the operator" in (await page.text_content("tr[data-name=nightly] td.state") or "")
        assert await page.is_visible("tr[data-name=nightly] button:text-is('Resume')")
        assert (await schedule.describe()).schedule.state.paused

        assert "Resumed nightly" in await _press(page, base, "Resume")
        assert (await page.text_content("tr[data-name=nightly] td.state") or "").strip() == "active"
        assert not (await schedule.describe()).schedule.state.paused

        assert "Started a firing of nightly" in await _press(page, base, "Run now")
        for _ in range(240):  # the firing shows at once, its run once the agent was handed the prompt
            if await page.evaluate(f"!!{ROW}.querySelector('td.firings a[href^=\"/runs/\"]')"):
                break
            await page.wait_for_timeout(500)
            await page.reload()
        await page.click("tr[data-name=nightly] td.firings a:text-is('run')")
        await until(page, "location.pathname.startsWith('/runs/')")
    firing = await stack.db.fetchrow("SELECT trigger, run_id FROM automation_firings WHERE automation = 'nightly'")
    assert firing["trigger"] == "run now" and firing["run_id"] is not None
