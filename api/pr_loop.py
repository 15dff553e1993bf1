"""The pull-request loop seen from the API: is a PR one of ours (api/platforms/github/webhook.py asks before it
starts the loop for a review, activities/results/pr_loop_start.py)."""

from __future__ import annotations

import asyncpg


async def is_ours(pool: asyncpg.Pool, repository: str, number: int) -> bool:
    """The PR is one the service works on: its branch's PR, or a PR conversation with a worktree."""
    return bool(await pool.fetchval(
        """SELECT EXISTS (SELECT 1 FROM pull_requests WHERE lower(repository) = lower($1) AND number = $2
                                                     AND state = 'open')
               OR EXISTS (SELECT 1 FROM conversations WHERE platform = 'github' AND environment_id IS NOT NULL
                          AND lower(platform_conversation_id) = lower($1 || '#' || $2::int) AND closed_at IS NULL)""",
        repository, number))
