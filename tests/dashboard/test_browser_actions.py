"""The dashboard's actions in a real browser against the whole stack: stop, remove, restore, set-up
again and clean up now do what they say, the destructive ones ask first, and the disk and the database
agree afterwards."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Page

from tests.agent_runs import run_of
from tests.agents import command
from tests.archives import archive_refs
from tests.conftest import Stack
from tests.dashboard.browser import chromium, served, until


async def _environment(stack: Stack, environment_id: str) -> dict:
    row = await stack.db.fetchrow("SELECT * FROM isolation_environments WHERE id = $1", environment_id)
    return dict(row)


async def _click_and_read(page: Page, selector: str, result: str = "#outcome, #refusal") -> str:
    await page.click(selector)
    return await page.text_content(result) or ""


async def test_stop_remove_restore_setup_and_cleanup_do_what_they_say(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    stack.settings.agent_command_line = ""  # worktrees without runs first
    keep = (await stack.say("act-keep"))["result"]
    dirty = (await stack.say("act-dirty"))["result"]
    stale = (await stack.say("act-stale"))["result"]
    stack.settings.agent_command_line = command("ticker", "1000", "0.2")
    long_run = (await stack.say("act-stop", "a long job"))["result"]["agentRunId"]

    async with served(stack) as base, chromium() as browser:
        page = await browser.new_page()
        page.set_default_timeout(60_000)

        # stop: asked first, then the run ends
        await page.goto(f"{base}/runs/{long_run}")
        await until(page, "document.getElementById('output').textContent.includes('tick 1 ')")
        await page.click("text=Stop…")
        assert (await run_of(stack, long_run))["status"] == "running", "asked first"
        assert "Stopped the agent's run" in await _click_and_read(page, "#confirm")
        assert (await run_of(stack, long_run))["status"] == "stopped"

        # remove: asked first; refused while dirty, then forced; archived, gone from disk
        Path(dirty["workingPath"], "notes.txt").write_text("unsaved work\n")
        await page.goto(f"{base}/environments/{dirty['environmentId']}")
        await page.click("text=Remove…")
        assert Path(dirty["workingPath"]).is_dir(), "asked first"
        assert "Not removed" in await _click_and_read(page, "#confirm")
        assert Path(dirty["workingPath"]).is_dir() and (await _environment(stack, dirty["environmentId"]))["status"] == "active"
        assert "removed" in (await _click_and_read(page, "#force")).lower()
        removed = await _environment(stack, dirty["environmentId"])
        assert not Path(dirty["workingPath"]).exists() and removed["status"] == "destroyed"
        assert removed["archive_ref"] in archive_refs(repo)

        # restore: from the codebase page's archives, with the uncommitted file
        await page.goto(f"{base}/codebases/project")
        outcome = await _click_and_read(page, f"tr[data-archive='{dirty['environmentId']}'] button")
        assert "restored" in outcome.lower(), outcome
        restored_as = (await _environment(stack, dirty["environmentId"]))["restored_as"]
        assert restored_as is not None and (await _environment(stack, str(restored_as)))["status"] == "active"
        assert Path(dirty["workingPath"], "notes.txt").read_text() == "unsaved work\n"

        # set-up again
        await page.goto(f"{base}/environments/{keep['environmentId']}")
        assert f"The set-up of {keep['branch']} has nothing to run" in await _click_and_read(page, "text=Run set-up again")

        # cleanup now: the dry run names the stale worktree; asked first; then it is gone
        await stack.db.execute(
            "UPDATE conversations SET last_activity_at = now() - interval '30 days' WHERE platform_conversation_id = $1",
            "act-stale")
        await stack.db.execute("UPDATE isolation_environments SET created_at = now() - interval '30 days' WHERE id = $1",
                               stale["environmentId"])
        await page.goto(f"{base}/cleanup")
        assert "30 days inactive" in await page.text_content("section.preview[data-codebase=project] ul.remove")
        await page.click("text=Clean up now…")
        assert Path(stale["workingPath"]).is_dir(), "asked first"
        report = await _click_and_read(page, "#confirm", "#report, #refusal")
        assert f"removed {stale['branch']} (30 days inactive)" in " ".join(report.split())
        assert not Path(stale["workingPath"]).exists()
        assert (await _environment(stack, stale["environmentId"]))["status"] == "destroyed"
        assert Path(keep["workingPath"]).is_dir() and (await _environment(stack, keep["environmentId"]))["status"] == "active"

        # the cleanup page now shows that cleanup as the last one
        await page.goto(f"{base}/cleanup")
        assert f"removed {stale['branch']} (30 days inactive)" in " ".join((await page.text_content("#report")).split())
