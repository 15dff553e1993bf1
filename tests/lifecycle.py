"""What the cleanup tests do to worktrees and conversations: commit, merge, let time pass, read statuses."""

from __future__ import annotations

from pathlib import Path

from tests.chat_commands import say_one
from tests.conftest import Stack
from tests.gitrepos import git


def commit_file(path: Path, name: str) -> str:
    (path / name).write_text(f"{name}\n")
    git("add", name, cwd=path)
    git("commit", "-q", "-m", f"add {name}", cwd=path)
    return git("rev-parse", "HEAD", cwd=path).strip()


def merge_into_main(repo: Path, branch: str) -> None:
    git("merge", "--no-ff", "-q", "-m", f"Merge {branch}", branch, cwd=repo)


async def backdate(stack: Stack, conversation: str, days: int) -> None:
    updated = await stack.db.execute(
        "UPDATE conversations SET last_activity_at = now() - make_interval(days => $2) "
        "WHERE platform_conversation_id = $1",
        conversation, days,
    )
    assert updated == "UPDATE 1"


async def status_of(stack: Stack, branch: str) -> str:
    return await stack.db.fetchval("SELECT status FROM isolation_environments WHERE branch_name = $1", branch)


async def counts_in_status(stack: Stack, conversation: str) -> list[str]:
    lines = (await say_one(stack, conversation, "/status")).splitlines()[3:]  # after the codebase, worktree, host
    return [line for line in lines if not line.startswith(("Disk: ", "Sandbox: ", "A run sees: ", "Limits per run", "Warning: limits per run"))]
