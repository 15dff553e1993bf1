"""Results in the tests: a checkout whose `origin` is a local bare repository while its recorded URL
is GitHub's, the run's messages, and waiting for what a delivery leaves behind."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Awaitable, Callable

import asyncpg

from tests.conftest import Stack
from tests.gitrepos import git
from tests.platforms.github import comment_event, deliver, issues_event
from tests.platforms.github_prs import settle, with_upstream


def with_github_origin(repo: Path, config: str | None = None) -> Path:
    """`repo` with a `.gitignore` (build.log) and optionally an `.isolator.toml` committed, and a bare
    `origin` holding it; returns the origin."""
    (repo / ".gitignore").write_text("build.log\n")
    if config is not None:
        (repo / ".isolator.toml").write_text(config)
    git("add", ".", cwd=repo)
    git("commit", "-q", "-m", "ignore build output", cwd=repo)
    return with_upstream(repo)


def tip(repository: Path, ref: str) -> str | None:
    found = subprocess.run(["git", "-C", str(repository), "rev-parse", "--verify", "--quiet", ref],
                           capture_output=True, text=True)
    return found.stdout.strip() or None


async def run_messages(db: asyncpg.Pool, run_id: str) -> list[str]:
    """The run's messages in its conversation, as last updated (the results' line included)."""
    rows = await db.fetch(r"""SELECT body FROM outbound_messages WHERE idempotency_key ~ ('^agent-run:' || $1 || ':')
                              ORDER BY id""", run_id)
    return [row["body"] for row in rows]


async def eventually(check: Callable[[], Awaitable[bool]], what: str, seconds: float = 60) -> None:
    for _ in range(int(seconds * 10)):
        if await check():
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"not in time: {what}")


async def final_message(db: asyncpg.Pool, run_id: str, containing: str, seconds: float = 60) -> str:
    """The run's last message once it contains `containing`."""
    found: list[str] = []

    async def has() -> bool:
        found[:] = await run_messages(db, run_id)
        return bool(found) and containing in found[-1]

    try:
        await eventually(has, f"{containing!r} in the last message of run {run_id}", seconds)
    except AssertionError:
        raise AssertionError(f"{containing!r} not in the messages of run {run_id}: {found}") from None
    return found[-1]


async def say_on_issue(stack: Stack, number: int, text: str, opened: bool = False) -> str:
    """The issue opened with `text`, or a comment on it; returns the agent's run id."""
    payload = issues_event("opened", number, text) if opened else comment_event(number, text)
    response, delivery = await deliver(stack, "issues" if opened else "issue_comment", payload)
    assert response.status_code == 202, response.text
    result = await settle(stack, delivery)
    assert result.run_id, result
    return result.run_id


def worktree_of(stack: Stack, codebase: dict, branch: str) -> Path:
    return stack.settings.worktree_base.resolve() / codebase["name"] / branch.replace("/", "-")
