"""The run page in a real browser (Debian's chromium) against the whole stack: the example agent of
`make dev`, driven as Claude Code is, prints its JSON events; the page shows them as a transcript while
it runs and, at its end, its final facts in place, without reloading. Also: the raw log one click away,
an agent's hostile output shown as text, and the facts as the page words them."""

from __future__ import annotations

import asyncio
import json
import os
import re
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from playwright.async_api import Page

from api.dashboard.runs import duration, facts
from isolator.settings import Settings
from tests.agent_runs import finished_run, run_of
from tests.agents import command
from tests.conftest import Stack
from tests.dashboard.browser import chromium, served, until

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_AGENT = str(ROOT / "examples" / "agent.py")
SCREENSHOT = ROOT / "docs" / "run-page.png"
PR_URL = "https://github.com/owner/project/pull/12"
# What the facts said while the run was running, as the page was told it.
WATCH_RUNNING = """() => {
  new MutationObserver(() => {
    if (document.getElementById("status").textContent === "running") {
      window.whileRunning = ["started", "duration", "cost"].map(id => document.getElementById(id).textContent);
    }
  }).observe(document.querySelector("dl.facts"), {childList: true, characterData: true, subtree: true});
}"""
# Each transcript entry as the reader sees it, to compare the page built live with the page rendered.
ENTRIES = "[...document.querySelectorAll('#entries > .entry')].map(e => [e.className, e.textContent.trim()])"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    # One run at a time: the run watched waits behind a long one until the page is open.
    return settings.model_copy(update={"agent_command_line": command("ticker", "1000", "0.2"),
                                       "agent_max_concurrent": 1})


async def test_the_page_shows_the_transcript_live_and_the_run_s_end_in_place(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    holding = (await stack.say("page-hold", "hold the only slot"))["result"]["agentRunId"]
    await _until_running(stack, holding)
    stack.settings.agent_driver, stack.settings.agent_executable = "claude", EXAMPLE_AGENT
    watched = (await stack.say("page-live", "Add a health check endpoint"))["result"]
    run_id = watched["agentRunId"]
    async with served(stack) as base, chromium() as browser:
        page = await browser.new_page()
        await page.goto(f"{base}/runs/{run_id}")
        assert await _text(page, "#status") == "queued"
        assert await _text(page, "#cost") == await _text(page, "#tokens") == "counted at the end"
        assert await page.locator("#changes").is_hidden()
        await page.evaluate("window.notReloaded = true")
        await page.evaluate(WATCH_RUNNING)

        await stack.say("page-hold", "/stop")  # the slot is free: the watched run starts
        await until(page, "document.querySelector('#entries .tool .result') !== null")
        await page.click("#entries .tool .result summary")  # unfolded by the reader: it stays so
        await _a_pull_request_for(stack, watched["branch"])
        await until(page, "document.getElementById('status').textContent.startsWith('done')")

        assert await page.evaluate("window.notReloaded") is True
        started, running, cost = await page.evaluate("window.whileRunning")
        assert started.endswith("in the queue") and running == "running" and cost == "counted at the end"
        assert await page.evaluate("document.querySelector('#entries .tool .result').open") is True
        assert await _text(page, "#status") == "done (exit code 0)"
        assert await page.get_attribute("#status", "class") == "status-done"
        assert (await _text(page, "#started")).endswith("in the queue")
        assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", await _text(page, "#finished"))
        assert re.fullmatch(r"\d+\.\d s", await _text(page, "#duration"))
        assert await _text(page, "#cost") == "$0.00" and " in, " in await _text(page, "#tokens")
        assert await page.get_attribute("#pr a", "href") == PR_URL
        assert await page.locator("#changed li").count() == 1 and await page.locator("#no-changes").is_hidden()
        assert await _text(page, "#changed li details.edit summary") == "NOTES.md"
        assert await page.locator("#changes").is_visible()
        # git's diff of the worktree before and after (the file holds a dated line; the edit event said less)
        shown = await _text(page, "#changed details.edit pre.diff")
        assert re.fullmatch(r"@@ -0,0 \+1 @@\+- \d{4}-\d\d-\d\d \d\d:\d\d UTC: Add a health check endpoint", shown), shown
        assert await page.locator("#live").count() == 0 and await page.locator("#actions").count() == 0

        changes = await page.inner_html("#changed")
        live = await page.evaluate(ENTRIES)
        kinds = [kind for kind, _ in live]
        assert kinds == ["entry start", "entry text", "entry tool", "entry tool", "entry answer"], live
        assert live[2][1].startswith("Write NOTES.md") and live[3][1].startswith("Bash git status --short")
        assert sum("I took a note" in text for _, text in live) == 1  # the final answer is said once
        assert await page.locator("#raw").get_attribute("open") is None  # the raw log is folded
        assert '"subtype": "init"' in await page.text_content("#log")

        await page.reload()  # the page rendered from the record reads as the one built live
        assert await page.evaluate(ENTRIES) == live
        assert await page.inner_html("#changed") == changes
        assert await page.locator("script").count() == 0
        raw = await stack.api.get(f"/runs/{run_id}/log")
        assert raw.status_code == 200 and raw.headers["content-type"].startswith("text/plain")
        assert raw.text.startswith('{"type": "system", "subtype": "init"')
        if os.environ.get("ISOLATOR_SCREENSHOT"):  # `ISOLATOR_SCREENSHOT=1 pytest ...` refreshes docs/run-page.png
            await page.locator("#entries .tool .result summary").last.click()
            await page.click("#changed details.edit summary")
            await page.set_viewport_size({"width": 1280, "height": 720})
            await page.screenshot(path=str(SCREENSHOT), full_page=True)


CODEX_EVENTS = [
    {"type": "item.completed", "item": {"type": "agent_message", "text": "Looking."}},
    {"type": "item.completed", "item": {"type": "command_execution", "command": "ls", "aggregated_output": "a.txt\n",
                                        "exit_code": 0}},
    {"type": "item.completed", "item": {"type": "file_change", "status": "completed",
                                        "changes": [{"path": "a.txt", "kind": "add"}]}},
    {"type": "item.completed", "item": {"type": "agent_message", "text": "I wrote a.txt."}},
    {"type": "turn.completed", "usage": {"input_tokens": 10}},
]


async def test_codex_s_events_read_live_as_the_page_renders_them(stack: Stack, repo: Path) -> None:
    """Codex's steps come whole, a command with its output: built live, they read as the page rendered later."""
    await stack.register(repo)
    stack.settings.agent_command_line = command("ticker", "1", "0")
    run_id = uuid.UUID((await stack.say("page-codex", "short"))["result"]["agentRunId"])
    await finished_run(stack, str(run_id))
    # The run's record as the worker writes a Codex run's, with its notifications (activities/runs/records.py).
    await stack.db.execute("UPDATE agent_runs SET status = 'running', log = '' WHERE id = $1", run_id)
    async with served(stack) as base, chromium() as browser:
        page = await browser.new_page()
        await page.goto(f"{base}/runs/{run_id}")
        for event in CODEX_EVENTS:
            await stack.db.execute("UPDATE agent_runs SET log = log || $2 WHERE id = $1", run_id, json.dumps(event) + "\n")
            await stack.db.execute("SELECT pg_notify('agent_run', $1)", str(run_id))
        await until(page, "document.querySelector('#entries > .answer') !== null")  # its last words, once the turn ends
        await stack.db.execute("UPDATE agent_runs SET status = 'done' WHERE id = $1", run_id)
        await stack.db.execute("SELECT pg_notify('agent_run', $1)", str(run_id))
        await until(page, "document.getElementById('status').textContent.startsWith('done')")
        live = await page.evaluate(ENTRIES)
        assert [kind for kind, _ in live] == ["entry text", "entry tool", "entry tool", "entry answer"], live
        assert live[1][1] == "Shell lsResult (1 line)a.txt" and live[3][1] == "I wrote a.txt."
        await page.reload()
        assert await page.evaluate(ENTRIES) == live


async def test_an_agent_s_hostile_events_are_shown_as_text(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    stack.settings.agent_command_line = command("ticker", "1", "0")
    run_id = (await stack.say("page-hostile", "short"))["result"]["agentRunId"]
    await finished_run(stack, run_id)
    hostile = '<script>alert(1)</script><img src=x onerror="alert(2)">'
    events = [{"type": "assistant", "message": {"content": [
                  {"type": "text", "text": hostile},
                  {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": hostile}}]}},
              {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t1", "content": hostile}]}},
              {"type": "result", "subtype": "success", "result": hostile}]
    await stack.db.execute("UPDATE agent_runs SET log = $2 WHERE id = $1", uuid.UUID(run_id),
                           "".join(json.dumps(event) + "\n" for event in events))
    page = await stack.api.get(f"/runs/{run_id}")
    assert page.status_code == 200
    assert "<script>alert" not in page.text and "<img" not in page.text
    assert page.text.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 3  # words, command and result; raw log


async def test_a_file_a_command_wrote_shows_its_diff_from_git(stack: Stack, repo: Path) -> None:
    """A plain program has no edit events: the page shows the worktree's diff before against after."""
    await stack.register(repo)
    stack.settings.agent_command_line = command("changer")  # writes and commits work-1.txt, with a shell
    run_id = (await stack.say("page-diff", "a <b>bold</b> change"))["result"]["agentRunId"]
    await finished_run(stack, run_id)
    patch = await stack.db.fetchval("SELECT diff FROM agent_runs WHERE id = $1", uuid.UUID(run_id))
    assert "diff --git a/work-1.txt b/work-1.txt\nnew file mode 100644" in patch, patch
    page = (await stack.api.get(f"/runs/{run_id}")).text
    changed = page[page.index('<ul id="changed">'):]
    assert '<details class="edit"><summary><code>work-1.txt</code></summary>' in changed
    assert "+a &lt;b&gt;bold&lt;/b&gt; change" in changed, "the patch, escaped"


def test_the_facts_say_times_to_the_second_durations_and_usage_counted_at_the_end() -> None:
    queued = datetime(2026, 1, 2, 3, 4, 5, 600_000, tzinfo=timezone.utc)
    assert duration(queued + timedelta(seconds=4.04), queued) == "4.0 s"
    assert duration(queued + timedelta(seconds=125), queued) == "2 min 05 s"
    assert duration(queued + timedelta(hours=2, minutes=3), queued) == "2 h 03 min"
    run = {"status": "running", "exit_code": None, "queued_at": queued, "started_at": queued + timedelta(seconds=1.5),
           "finished_at": None, "cost_usd": None, "changed_files": [], "commits": None, "pr_url": None,
           **{f"{name}_tokens": None for name in ("input", "output", "cache_read", "cache_write")}}
    running = facts(run)  # type: ignore[arg-type]
    assert running["started"] == "2026-01-02 03:04:07 UTC, after 1.5 s in the queue"
    assert (running["finished"], running["duration"]) == ("not yet", "running")
    assert running["cost"] == running["tokens"] == "counted at the end"
    ended = facts({**run, "status": "done", "exit_code": 0,  # type: ignore[arg-type]
                   "finished_at": queued + timedelta(seconds=70), "commits": 2, "output_tokens": 5})
    assert (ended["status_text"], ended["duration"], ended["commits"]) == ("done (exit code 0)", "1 min 08 s",
                                                                         "2 commits made.")
    assert ended["cost"] == "not reported by the agent" and ended["tokens"] == "0 in, 5 out"


async def _until_running(stack: Stack, run_id: str, seconds: float = 60) -> None:
    for _ in range(int(seconds * 20)):
        if (await run_of(stack, run_id))["status"] == "running":
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"run {run_id} did not start")


async def _a_pull_request_for(stack: Stack, branch: str) -> None:
    """As the results activity records one (its own tests make it)."""
    codebase_id = await stack.db.fetchval("SELECT id FROM codebases WHERE name = 'project'")
    await stack.db.execute(
        """INSERT INTO pull_requests (codebase_id, branch_name, remote_branch, repository, number, url, base_branch,
                                      title, origin)
           VALUES ($1, $2, $2, 'owner/project', 12, $3, 'main', 'Add a health check', 'opened')""",
        codebase_id, branch, PR_URL)


async def _text(page: Page, selector: str) -> str:
    return (await page.text_content(selector) or "").strip()
