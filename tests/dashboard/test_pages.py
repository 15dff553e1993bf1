"""The dashboard's pages, in process (the browser tests in test_browser.py drive a real server): each
page shows what the database and git know, and what strangers wrote is escaped."""

from __future__ import annotations

from pathlib import Path

import pytest

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
