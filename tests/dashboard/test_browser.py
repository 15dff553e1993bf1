"""The dashboard in a real browser (Debian's chromium, Playwright) against the whole stack: a uvicorn
server, the workers, real git, PostgreSQL and Temporal. Messages make the environments, a small real
agent prints lines slowly, and the pages show them live, escaped, with the right states."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from playwright.async_api import Page

from isolator.settings import Settings
from tests.agent_runs import finished_run
from tests.agents import command
from tests.conftest import Stack
from tests.dashboard.browser import chromium, served

TICKS = 10
HOSTILE_MESSAGE = '<script>window.injected = "message"</script><img src=x onerror="window.injected=1"> fix it'
HOSTILE_BRANCH = 'feature/<script>window.injected="branch"</script><i>x</i>'
SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "dashboard.png"

# Records, in the page, when each `tick <n> at <printed ms>` line first shows in the answer.
WATCH_TICKS = """() => {
  window.seen = {};
  const output = document.getElementById("output");
  const record = () => {
    for (const match of output.textContent.matchAll(/tick (\\d+) at (\\d+)/g)) {
      if (!(match[1] in window.seen)) window.seen[match[1]] = {printed: Number(match[2]), shown: Date.now()};
    }
    // kept in sessionStorage, where a reload would not lose it
    sessionStorage.setItem("ticks", JSON.stringify({seen: window.seen, atLoad: window.atLoad || []}));
  };
  record();
  window.atLoad = Object.keys(window.seen);
  new MutationObserver(record).observe(output, {childList: true, characterData: true, subtree: true});
}"""


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"agent_command_line": command("ticker", str(TICKS), "0.5")})


async def test_the_pages_show_three_environments_and_a_run_live_escaped(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    second = await stack.say("dash-b", "second")
    third = await stack.say("dash-c", "third")
    await stack.say("dash-c", "/worktree remove --force")  # its run is stopped, its worktree archived
    async with served(stack) as base, chromium() as browser:
        page = await browser.new_page()
        await page.goto(f"{base}/")  # the browser is warm before the run starts
        live = await stack.say("dash-a", HOSTILE_MESSAGE)
        await page.goto(f"{base}/runs/{live['result']['agentRunId']}")
        await page.evaluate(WATCH_TICKS)
        await page.wait_for_selector("#status.status-done", timeout=60_000)  # final, in place
        ticks = await page.evaluate("JSON.parse(sessionStorage.getItem('ticks'))")
        seen, at_load = ticks["seen"], ticks["atLoad"]
        answer = await page.text_content("#output")
        message = await page.text_content("#message")
        injected = await page.evaluate("window.injected")
        bold = await page.locator("#output b").count()

        pushed = {tick: times["shown"] - times["printed"] for tick, times in seen.items() if tick not in at_load}
        assert len(pushed) >= 3, (seen, at_load)  # pushed while the page was open (it opens while the run is young)
        # Live: most lines show within a second of their printing (one held up by a loaded machine is no failure).
        assert sum(lag <= 1000 for lag in pushed.values()) * 2 >= len(pushed), pushed
        assert f"final answer: {HOSTILE_MESSAGE}" in answer and message == HOSTILE_MESSAGE
        assert "<script>window.injected = true</script><b>not bold</b>" in answer
        assert injected is None and bold == 0

        await stack.db.execute("UPDATE isolation_environments SET branch_name = $1 WHERE id = $2", HOSTILE_BRANCH,
                               second["result"]["environmentId"])  # as a PR's own branch may be named
        await page.goto(f"{base}/")
        card = page.locator("section.codebase[data-codebase=project]")
        assert "2 active" in await card.text_content()
        await page.click("text=project")
        rows = await _rows(page, "table.environments")
        archives = await _rows(page, "table.archives")
        assert sorted(rows) == sorted([(live["result"]["branch"], "active"), (HOSTILE_BRANCH, "active")])
        assert [branch for branch, _ in archives] == [third["result"]["branch"]]
        assert await page.evaluate("window.injected") is None and await page.locator("td.branch i").count() == 0
        if os.environ.get("ISOLATOR_SCREENSHOT"):  # `ISOLATOR_SCREENSHOT=1 pytest ...` refreshes docs/dashboard.png
            await stack.db.execute("UPDATE isolation_environments SET branch_name = 'feature/login-form' WHERE id = $1",
                                   second["result"]["environmentId"])
            await stack.db.execute("UPDATE codebases SET canonical_path = '/srv/git/project'")  # not the test's folder
            await page.reload()
            await page.set_viewport_size({"width": 1280, "height": 720})
            await page.screenshot(path=str(SCREENSHOT), full_page=True)


async def _rows(page: Page, table: str) -> list[tuple[str, str]]:
    """(branch, state) of each row of a table of environments."""
    rows = page.locator(f"{table} tbody tr[data-environment], {table} tbody tr[data-archive]")
    found = []
    for index in range(await rows.count()):
        row = rows.nth(index)
        found.append((await row.locator("td.branch").text_content(), await row.get_attribute("data-state") or "archived"))
    return found


async def test_a_finished_run_s_page_is_final(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    started = await stack.say("dash-final", "short")
    run = await finished_run(stack, started["result"]["agentRunId"])
    async with served(stack) as base, chromium() as browser:
        page = await browser.new_page()
        await page.goto(f"{base}/runs/{run['id']}")
        assert await page.locator("#live").count() == 0 and await page.locator("script").count() == 0
        assert "final answer: short" in await page.text_content("#output")
        assert "working on tick 1" in await page.text_content("#log")
