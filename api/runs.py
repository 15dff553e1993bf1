"""`/api/runs`: the coding agent's runs, read: each with its message, status, times and changes,
its answer, and its log (standard error), which during a run holds what has been written so far."""

from __future__ import annotations

import uuid
from typing import Annotated

import asyncpg
from fastapi import APIRouter, Depends, HTTPException, Query, status
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel

from api.deps import get_pool, require_api_token

router = APIRouter(prefix="/api/runs", tags=["runs"], dependencies=[Depends(require_api_token)])

_LISTED = 200  # newest runs listed at most

_COLUMNS = """id, environment_id, platform || ':' || conversation_id AS conversation, message, status, exit_code,
              queued_at, started_at, finished_at, changed_files, commits, output_cut, log_cut,
              driver, session_id, cost_usd, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, trace_id"""


class Tokens(BaseModel):
    """What the agent reported it used; all 0 when it reports nothing."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    total: int = 0


class RunTotals(BaseModel):
    runs: int
    cost_usd: float  # of the runs whose agent reports money
    tokens: Tokens


class RunView(BaseModel):
    id: str
    environment_id: str
    conversation: str  # `platform:conversation id`
    message: str
    status: str  # queued, running, done, failed, timed_out, stopped, interrupted, dropped
    exit_code: int | None
    queued_at: str
    started_at: str | None
    finished_at: str | None
    changed_files: list[str]
    commits: int | None
    output_cut: bool  # the answer passed 10 MiB: the rest was not kept
    log_cut: bool
    driver: str | None  # claude, codex, aider or command
    session_id: str | None  # the agent's session the run was a turn of
    cost_usd: float | None  # as the agent reported it (Claude Code, Aider); None: not reported
    tokens: Tokens
    trace_id: str | None = None  # the OpenTelemetry trace of its message (docs/observability.md); None: tracing off


class RunDetail(RunView):
    output: str  # the answer, standard output


def _view(row: asyncpg.Record, model: type[RunView] = RunView, **extra: object) -> RunView:
    def time(name: str) -> str | None:
        return row[name].isoformat() if row[name] is not None else None

    return model(
        id=str(row["id"]), environment_id=str(row["environment_id"]), conversation=row["conversation"],
        message=row["message"], status=row["status"], exit_code=row["exit_code"], queued_at=row["queued_at"].isoformat(),
        started_at=time("started_at"), finished_at=time("finished_at"), changed_files=list(row["changed_files"]),
        commits=row["commits"], output_cut=row["output_cut"], log_cut=row["log_cut"], driver=row["driver"],
        session_id=row["session_id"], cost_usd=float(row["cost_usd"]) if row["cost_usd"] is not None else None,
        tokens=_tokens(row), trace_id=row["trace_id"], **extra,
    )


def _tokens(row: asyncpg.Record) -> Tokens:
    counts = {name: int(row[f"{name}_tokens"] or 0) for name in ("input", "output", "cache_read", "cache_write")}
    return Tokens(**counts, total=sum(counts.values()))


@router.get("", response_model=list[RunView])
async def list_runs(
    pool: Annotated[asyncpg.Pool, Depends(get_pool)],
    conversation: Annotated[str | None, Query(min_length=3, max_length=300, pattern=r"^[a-z]+:[^\x00-\x1f\x7f]+$",
                                              description="`platform:conversation id`")] = None,
    environment: Annotated[uuid.UUID | None, Query(description="an environment's id")] = None,
) -> list[RunView]:
    """The newest runs first (at most 200), of a conversation, of an environment, or of both."""
    platform, _, conversation_id = (conversation or "").partition(":")
    rows = await pool.fetch(
        f"""SELECT {_COLUMNS} FROM agent_runs
            WHERE ($1::text IS NULL OR (platform = $1 AND conversation_id = $2))
              AND ($3::uuid IS NULL OR environment_id = $3)
            ORDER BY queued_at DESC, id LIMIT {_LISTED}""",
        platform or None, conversation_id, environment,
    )
    return [_view(row) for row in rows]


@router.get("/totals", response_model=RunTotals)
async def run_totals(
    pool: Annotated[asyncpg.Pool, Depends(get_pool)],
    conversation: Annotated[str | None, Query(min_length=3, max_length=300, pattern=r"^[a-z]+:[^\x00-\x1f\x7f]+$",
                                              description="`platform:conversation id`")] = None,
    codebase: Annotated[uuid.UUID | None, Query(description="a codebase's id")] = None,
) -> RunTotals:
    """What the agent's runs cost, summed: of a conversation, of a codebase, of both, or of all."""
    platform, _, conversation_id = (conversation or "").partition(":")
    row = await pool.fetchrow(
        """SELECT count(*) AS runs, coalesce(sum(r.cost_usd), 0) AS cost_usd,
                  coalesce(sum(r.input_tokens), 0) AS input_tokens, coalesce(sum(r.output_tokens), 0) AS output_tokens,
                  coalesce(sum(r.cache_read_tokens), 0) AS cache_read_tokens,
                  coalesce(sum(r.cache_write_tokens), 0) AS cache_write_tokens
           FROM agent_runs r JOIN isolation_environments e ON e.id = r.environment_id
           WHERE ($1::text IS NULL OR (r.platform = $1 AND r.conversation_id = $2))
             AND ($3::uuid IS NULL OR e.codebase_id = $3)""",
        platform or None, conversation_id, codebase,
    )
    return RunTotals(runs=row["runs"], cost_usd=float(row["cost_usd"]), tokens=_tokens(row))


@router.get("/{run_id}", response_model=RunDetail)
async def get_run(run_id: uuid.UUID, pool: Annotated[asyncpg.Pool, Depends(get_pool)]) -> RunView:
    row = await pool.fetchrow(f"SELECT {_COLUMNS}, output FROM agent_runs WHERE id = $1", run_id)
    if row is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, detail=f"no run {run_id}")
    return _view(row, RunDetail, output=row["output"])


@router.get("/{run_id}/log", response_class=PlainTextResponse)
async def get_run_log(run_id: uuid.UUID, pool: Annotated[asyncpg.Pool, Depends(get_pool)]) -> PlainTextResponse:
    """The run's standard error as text: so far, while it runs."""
    log = await pool.fetchval("SELECT log FROM agent_runs WHERE id = $1", run_id)
    if log is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, detail=f"no run {run_id}")
    return PlainTextResponse(log)
