"""`/api/environments`: the isolation environments, read. Read-only: removals and restores go through
the environments' own workflows (`/worktree remove` in chat)."""

from __future__ import annotations

import uuid
from typing import Annotated, Literal

import asyncpg
from fastapi import APIRouter, Depends, HTTPException, Query, status
from pydantic import BaseModel

from api.deps import get_pool, require_api_token

router = APIRouter(prefix="/api/environments", tags=["environments"], dependencies=[Depends(require_api_token)])

_SELECT = """
SELECT e.id, e.workflow_type, e.workflow_id, e.working_path, e.branch_name, e.status, e.setup_state,
       e.created_at, e.destroyed_at, e.created_by_platform, c.name AS codebase,
       coalesce(array_agg(v.platform || ':' || v.platform_conversation_id ORDER BY v.id)
                FILTER (WHERE v.id IS NOT NULL), '{}') AS conversations,
       (SELECT min(port) FROM port_allocations p WHERE p.environment_id = e.id) AS first_port,
       (SELECT max(port) FROM port_allocations p WHERE p.environment_id = e.id) AS last_port
FROM isolation_environments e
JOIN codebases c ON c.id = e.codebase_id
LEFT JOIN conversations v ON v.environment_id = e.id
"""


class EnvironmentView(BaseModel):
    id: str
    codebase: str
    workflow_type: str
    workflow_id: str
    branch: str
    working_path: str
    status: str
    setup_state: str
    ports: str | None  # `first-last`
    conversations: list[str]  # `platform:conversation id` of the conversations that work in it
    created_by_platform: str | None
    created_at: str
    destroyed_at: str | None


def _view(row: asyncpg.Record) -> EnvironmentView:
    return EnvironmentView(
        id=str(row["id"]), codebase=row["codebase"], workflow_type=row["workflow_type"],
        workflow_id=row["workflow_id"], branch=row["branch_name"], working_path=row["working_path"],
        status=row["status"], setup_state=row["setup_state"],
        ports=f"{row['first_port']}-{row['last_port']}" if row["first_port"] is not None else None,
        conversations=list(row["conversations"]), created_by_platform=row["created_by_platform"],
        created_at=row["created_at"].isoformat(),
        destroyed_at=row["destroyed_at"].isoformat() if row["destroyed_at"] else None,
    )


@router.get("", response_model=list[EnvironmentView])
async def list_environments(
    pool: Annotated[asyncpg.Pool, Depends(get_pool)],
    codebase: Annotated[str | None, Query(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$",
                                          description="a codebase's name")] = None,
    environment_status: Annotated[Literal["active", "destroyed"] | None, Query(alias="status")] = None,
    conversation: Annotated[str | None, Query(min_length=3, max_length=300, pattern=r"^[a-z]+:[^\x00-\x1f\x7f]+$",
                                              description="`platform:conversation id`")] = None,
) -> list[EnvironmentView]:
    platform, _, conversation_id = (conversation or "").partition(":")
    rows = await pool.fetch(
        _SELECT + """
        WHERE ($1::text IS NULL OR c.name = $1) AND ($2::text IS NULL OR e.status = $2)
          AND ($3::text IS NULL OR e.id IN (SELECT environment_id FROM conversations
                                           WHERE platform = $3 AND platform_conversation_id = $4))
        GROUP BY e.id, c.name ORDER BY e.created_at, e.id""",
        codebase, environment_status, platform or None, conversation_id,
    )
    return [_view(row) for row in rows]


@router.get("/{environment_id}", response_model=EnvironmentView)
async def get_environment(environment_id: uuid.UUID, pool: Annotated[asyncpg.Pool, Depends(get_pool)]) -> EnvironmentView:
    row = await pool.fetchrow(_SELECT + " WHERE e.id = $1 GROUP BY e.id, c.name", environment_id)
    if row is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, detail=f"no environment {environment_id}")
    return _view(row)
