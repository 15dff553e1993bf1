"""The dashboard's pages, in process (the browser tests in test_browser.py drive a real server): each
page shows what the database and git know, and what strangers wrote is escaped."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from api.app import create_app

from isolator.settings import Settings
from tests.agent_runs import finished_run
from tests.agents import command
from tests.conftest import Stack

HOSTILE = "<script>alert(1)</script><b>bold</b>"


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"agent_command_line": command("ticker", "2", "0.05")})


async def test_every_page_renders_and_escapes_what_strangers_wrote(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    started = await stack.say("pages-a", f"please {HOSTILE}")
    environment_id = started["result"]["environmentId"]
    run_id = started["result"]["agentRunId"]
    run = await finished_run(stack, run_id)

    overview = await stack.api.get("/")
    codebase = await stack.api.get("/codebases/project")
    environment = await stack.api.get(f"/environments/{environment_id}")
    run_page = await stack.api.get(f"/runs/{run['id']}")
    cleanup = await stack.api.get("/cleanup")

    for page in (overview, codebase, environment, run_page, cleanup):
        assert page.status_code == 200, page.text
        assert "<script>alert" not in page.text and "<b>bold" not in page.text
        assert page.headers["content-security-policy"].startswith("default-src 'none'")
    assert "1 active" in overview.text and "loopback" in overview.text
    assert started["result"]["branch"] in codebase.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in run_page.text and "final answer: please" in run_page.text
    assert "Last activity" in environment.text


async def test_without_a_token_only_loopback_clients_are_served(stack: Stack) -> None:
    app = create_app(stack.settings, temporal=stack.temporal, pool=stack.db)
    transport = httpx.ASGITransport(app=app, client=("203.0.113.9", 40000))
    async with httpx.AsyncClient(transport=transport, base_url="http://isolator.test") as remote:
        refused = await remote.get("/")
        action = await remote.post("/cleanup/run", headers={"Origin": "http://isolator.test"})
    local = await stack.api.get("/")
    assert refused.status_code == 403 and "only to this machine" in refused.text and "API_TOKEN" in refused.text
    assert action.status_code == 403
    assert local.status_code == 200 and "served only to this machine (loopback)" in local.text


async def test_the_codebase_page_filters_sorts_and_pages(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    stack.settings.agent_command_line = ""
    for name in ("red_1", "redx1", "blue_1"):
        await stack.say(f"page-{name}", f"/worktree create {name}")
    filtered = await stack.api.get("/codebases/project", params={"branch": "d_1", "sort": "branch", "dir": "asc"})
    wildcard = await stack.api.get("/codebases/project", params={"branch": "%"})
    bad_sort = await stack.api.get("/codebases/project", params={"sort": "id; DROP TABLE codebases"})
    unknown = await stack.api.get("/codebases/nothing-here")
    rows = filtered.text.count("<tr data-environment=")
    assert rows == 1 and "task-red_1" in filtered.text and "task-redx1" not in filtered.text  # `_` is no wildcard
    assert "No environment matches" in wildcard.text, "a % is a character, not a wildcard"
    assert bad_sort.status_code == 422 and unknown.status_code == 404


async def test_with_public_url_the_run_s_last_message_links_its_page(stack: Stack, repo: Path) -> None:
    stack.settings.public_url = "https://isolator.example.org/"
    await stack.register(repo)
    run_id = (await stack.say("pages-link", "hi"))["result"]["agentRunId"]
    await finished_run(stack, run_id)
    replies = await stack.replies("pages-link")
    assert any(f"The run, live and in full: https://isolator.example.org/runs/{run_id}" in reply for reply in replies)
