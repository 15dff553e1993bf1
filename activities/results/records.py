"""The pull requests branches' work goes to, as recorded (`pull_requests`), and the run's last message,
which the results' line is added to."""

from __future__ import annotations

import uuid

import asyncpg

from isolator.contracts.results import PullRequestRef


class PullRequestRecords:
    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool = pool

    async def of_branch(self, codebase_id: str, branch: str) -> PullRequestRef | None:
        row = await self.pool.fetchrow(
            "SELECT * FROM pull_requests WHERE codebase_id = $1 AND branch_name = $2", uuid.UUID(codebase_id), branch,
        )
        return ref_of(row) if row is not None else None

    async def record(self, codebase_id: str, branch: str, ref: PullRequestRef, opened_by: str | None) -> None:
        """The branch's PR, recorded once; later calls update what GitHub said about it."""
        await self.pool.execute(
            """INSERT INTO pull_requests (codebase_id, branch_name, remote_branch, repository, number, url,
                                          base_branch, title, draft, origin, state, checks, opened_by)
               VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
               ON CONFLICT (codebase_id, branch_name) DO UPDATE SET
                   remote_branch = EXCLUDED.remote_branch, repository = EXCLUDED.repository,
                   number = EXCLUDED.number, url = EXCLUDED.url, base_branch = EXCLUDED.base_branch,
                   title = EXCLUDED.title, draft = EXCLUDED.draft, state = EXCLUDED.state,
                   checks = coalesce(EXCLUDED.checks, pull_requests.checks), updated_at = now()""",
            uuid.UUID(codebase_id), branch, ref.remote_branch, ref.repository, ref.number, ref.url, ref.base_branch,
            ref.title, ref.draft, ref.origin, ref.state, ref.checks, opened_by,
        )

    async def pushed_head(self, codebase_id: str, branch: str, sha: str, run_id: str | None, autofix: bool) -> None:
        """A head the service pushed, with the run that made it (the first, when a later push was up to date)."""
        await self.pool.execute(
            """INSERT INTO pushed_heads (codebase_id, sha, branch_name, run_id, autofix) VALUES ($1, $2, $3, $4, $5)
               ON CONFLICT (codebase_id, sha) DO NOTHING""",
            uuid.UUID(codebase_id), sha, branch, uuid.UUID(run_id) if run_id else None, autofix)

    async def ci_loop(self, codebase_id: str, branch: str) -> asyncpg.Record | None:
        """The pull-request loop's counts for the branch's PR (docs/pr-loop.md)."""
        return await self.pool.fetchrow(
            """SELECT ci_sha, ci_state, fix_attempts, fixing_stopped FROM pull_requests
               WHERE codebase_id = $1 AND branch_name = $2""", uuid.UUID(codebase_id), branch)

    async def last_message_of_run(self, run_id: str) -> tuple[str, str] | None:
        """(idempotency key, text) of the run's last message in its conversation (activities/runs/answer.py's keys)."""
        row = await self.pool.fetchrow(
            r"""SELECT idempotency_key, body FROM outbound_messages
                WHERE idempotency_key ~ ('^agent-run:' || $1 || ':[0-9]+$')
                ORDER BY split_part(idempotency_key, ':', 3)::int DESC LIMIT 1""",
            run_id,
        )
        return (row["idempotency_key"], row["body"]) if row is not None else None

    async def answer_of_run(self, run_id: str) -> str:
        """The agent's answer, as kept with the run."""
        answer = await self.pool.fetchval("SELECT output FROM agent_runs WHERE id = $1", uuid.UUID(run_id))
        return answer or ""


def ref_of(row: asyncpg.Record) -> PullRequestRef:
    return PullRequestRef(
        repository=row["repository"], number=row["number"], url=row["url"], remote_branch=row["remote_branch"],
        base_branch=row["base_branch"], title=row["title"], draft=row["draft"], origin=row["origin"],
        state=row["state"], checks=row["checks"],
    )
