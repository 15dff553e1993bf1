"""Commands that said less than they did, or other than they did (issue 47, items 16, 21, 23): real git,
PostgreSQL and Temporal through `/test/message`."""

from __future__ import annotations

from pathlib import Path

from tests.chat_commands import say_one
from tests.conftest import Stack
from workflows.chat import texts, worktree_texts


async def test_budget_plus_without_a_daily_budget_changes_nothing_and_says_how_to_set_one(
        stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    assert stack.settings.agent_daily_budget_usd is None

    reply = await say_one(stack, "budget-1", "/budget +10")

    assert reply.startswith("Nothing was raised: no daily budget is set"), reply
    assert "Raised today's budget" not in reply
    assert "start the service with AGENT_DAILY_BUDGET_USD" in reply and "`AGENT_DAILY_BUDGET_USD=20`" in reply
    assert await stack.db.fetchval("SELECT count(*) FROM budget_raises") == 0, "nothing recorded"
    stack.settings.agent_daily_budget_usd = 5.0  # set later the same day: no raise of nothing counts
    assert "raised today" not in await say_one(stack, "budget-1", "/budget")


async def test_why_without_a_name_explains_this_conversations_worktree(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    assert await say_one(stack, "why-own", "/worktree why") == worktree_texts.no_worktree_here("why")
    created = (await stack.say("why-own", "hello"))["result"]

    own = await say_one(stack, "why-own", "/worktree why")

    assert own == await say_one(stack, "why-own", f"/worktree why {created['branch']}")
    assert own.startswith(f"`{created['branch']}` at `{created['workingPath']}`"), own
    assert "Conversations: `test:why-own` (active today)" in own
    assert (await say_one(stack, "why-own", "/worktree why a b")).startswith("Usage: `/worktree why [name]`")


async def test_help_says_status_shows_the_run_and_the_queue(stack: Stack, repo: Path) -> None:
    await stack.register(repo)
    reply = await say_one(stack, "help-status", "/help")
    (line,) = [line for line in reply.splitlines() if line.startswith("`/status`")]
    assert "the agent's running run and the messages queued behind it" in line, line
    assert reply == texts.HELP
