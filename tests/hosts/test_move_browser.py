"""The codebase page's Move button in a real browser (Debian's chromium, tests/dashboard/browser.py): named a
host, it moves the codebase there with its worktree's uncommitted work, and the page says so."""

from __future__ import annotations

import asyncio
from pathlib import Path

from isolator.payloads import connect
from tests.conftest import Stack
from tests.dashboard.browser import chromium, served
from tests.hosts.relocation import bare_origin, other_host
from workers.worker import running_workers


async def test_the_move_button_moves_the_codebase_with_its_work(stack: Stack, tmp_path: Path) -> None:
    origin = bare_origin(tmp_path / "origin")
    await stack.api.post("/api/codebases", json={"url": f"file://{origin}", "name": "project"})
    await stack.say("browser-move", "/clone project")
    old = Path((await stack.say("browser-move", "hello"))["result"]["workingPath"])
    (old / "draft.txt").write_text("not committed\n")
    other = other_host(stack.settings, tmp_path / "other")

    async with running_workers(await connect(stack.settings.temporal_address), stack.db, other), \
            served(stack) as base, chromium() as browser:
        page = await browser.new_page()
        page.set_default_timeout(60_000)
        await page.goto(f"{base}/codebases/project")
        await page.fill("#move-host", other.host)
        await page.click("#move")
        assert f"Moving project to {other.host}" in (await page.text_content("#outcome") or "")
        for _ in range(600):
            if await stack.db.fetchval("SELECT checkout_state FROM codebases") == "moved":
                break
            await asyncio.sleep(0.1)
        await page.goto(f"{base}/codebases/project")
        assert "Checkout moved" in (await page.text_content("#checkout-state") or "")
        assert f"host {other.host}" in (await page.text_content("main") or "")

    moved_to = Path(await stack.db.fetchval("SELECT working_path FROM isolation_environments"))
    assert moved_to.is_relative_to(other.worktree_base)
    assert (moved_to / "draft.txt").read_text() == "not committed\n"
    assert any(f"moved from {stack.settings.host} to {other.host}" in text for text in await stack.replies("browser-move"))
