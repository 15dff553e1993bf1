"""The dashboard's pages, in process (the browser tests in test_browser.py drive a real server): each
page shows what the database and git know, and what strangers wrote is escaped."""

from __future__ import annotations

import uuid
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
    await _record_cost_pull_request_and_warm_worktree(stack, run_id, started["result"]["branch"])
    stack.settings.agent_daily_budget_usd = 5.0

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
    assert "$1.25 today of $5.00 (AGENT_DAILY_BUDGET_USD)" in overview.text and "$1.25 this month" in overview.text
    assert "1 warm" in overview.text and "1 warm</span> worktree(s) ready" in codebase.text
    for page in (codebase, environment, run_page):
        assert 'href="https://github.com/owner/project/pull/7?q=&#34;&gt;&lt;b&gt;x"' in page.text, page.text
    assert "#7 fix &lt;script&gt;alert(1)&lt;/script&gt;" in environment.text and "checks 2 passed" in environment.text
    assert "$1.25" in run_page.text and "1,200 in, 340 out" in run_page.text


async def _record_cost_pull_request_and_warm_worktree(stack: Stack, run_id: str, branch: str) -> None:
    """What the agents, results and warm pool record, written as they write it (their own tests make it)."""
    await stack.db.execute("UPDATE agent_runs SET cost_usd = 1.25, input_tokens = 1200, output_tokens = 340"
                           " WHERE id = $1", uuid.UUID(run_id))
    codebase_id = await stack.db.fetchval("SELECT id FROM codebases WHERE name = 'project'")
    await stack.db.execute(
        """INSERT INTO pull_requests (codebase_id, branch_name, remote_branch, repository, number, url, base_branch,
                                      title, origin, checks)
           VALUES ($1, $2, $2, 'owner/project', 7, $3, 'main', $4, 'opened', '2 passed')""",
        codebase_id, branch, 'https://github.com/owner/project/pull/7?q="><b>x', f"fix {HOSTILE}")
    await stack.db.execute("INSERT INTO warm_worktrees (codebase_id, path, state) VALUES ($1, $2, 'ready'),"
                           " ($1, $3, 'making')", codebase_id, f"warm/{run_id}-a", f"warm/{run_id}-b")


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
    assert bad_sort.status_code == 400 and "<h1>Bad request</h1>" in bad_sort.text and unknown.status_code == 404


async def test_with_public_url_the_run_s_last_message_links_its_page(stack: Stack, repo: Path) -> None:
    stack.settings.public_url = "https://isolator.example.org/"
    await stack.register(repo)
    run_id = (await stack.say("pages-link", "hi"))["result"]["agentRunId"]
    await finished_run(stack, run_id)
    replies = await stack.replies("pages-link")
    assert any(f"The run, live and in full: https://isolator.example.org/runs/{run_id}" in reply for reply in replies)


async def test_the_filter_form_with_any_state_filters_by_branch_alone(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    started = await stack.say("pages-filter", "hello")
    await finished_run(stack, started["result"]["agentRunId"])
    branch = started["result"]["branch"]

    page = await stack.api.get("/codebases/project", params={"branch": branch, "state": ""})
    none = await stack.api.get("/codebases/project", params={"branch": "no-such-branch", "state": ""})

    assert page.status_code == 200, page.text
    assert f'data-environment="{started["result"]["environmentId"]}"' in page.text
    assert none.status_code == 200 and "No environment matches" in none.text


async def test_a_bad_id_or_unknown_codebase_is_a_not_found_page_never_json(stack: Stack) -> None:
    bad_environment = await stack.api.get("/environments/not-an-id")
    bad_run = await stack.api.get("/runs/12")
    unknown = await stack.api.get("/codebases/no-such-codebase")
    bad_page = await stack.api.get("/codebases/no-such-codebase", params={"page": "x"})

    for page in (bad_environment, bad_run, unknown):
        assert page.status_code == 404, page.text
        assert page.headers["content-type"].startswith("text/html")
        assert "<h1>Not found</h1>" in page.text and "Refused" not in page.text
    assert bad_page.status_code == 400 and bad_page.headers["content-type"].startswith("text/html")
    assert "<h1>Bad request</h1>" in bad_page.text and "page" in bad_page.text


async def test_the_removal_and_cleanup_pages_say_the_retention_in_days(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    started = await stack.say("pages-retention", "hello")
    await finished_run(stack, started["result"]["agentRunId"])
    environment_id = started["result"]["environmentId"]

    confirm = await stack.api.get(f"/environments/{environment_id}/remove")
    cleanup = await stack.api.get("/cleanup")

    days = stack.settings.archive_retention_days
    assert confirm.status_code == 200 and cleanup.status_code == 200, confirm.text + cleanup.text
    assert f"for {days} days." in confirm.text and f"archives older than {days} days are pruned" in cleanup.text
    for page in (confirm, cleanup):
        assert "ARCHIVE_RETENTION_DAYS" not in page.text
