"""`POST /api/codebases/{id}/move {"host": "hostC"}`: move a codebase, its worktrees' work with it, to another
host (workflows/move.py). The request is checked first, each mistake a 4xx with its reason: no such
codebase (404), no such host or no worker of it (422), already there or no URL to clone from (409). The
dashboard's button on the codebase page starts the same move (api/dashboard/codebase_move.py).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any

import asyncpg
from fastapi import APIRouter, Depends, HTTPException, Response, status
from pydantic import BaseModel, ConfigDict, Field, field_validator
from temporalio.client import Client
from temporalio.common import WorkflowIDConflictPolicy

from activities.codebases.host_workers import HostWorkerActivities
from api.codebases import CodebaseKey, codebase_id_of
from api.deps import get_client, get_pool, get_settings, require_api_token
from isolator.contracts.move import MoveReport, MoveRequest, move_workflow_id
from isolator.settings import Settings
from workflows.move import MoveCodebaseWorkflow

router = APIRouter(prefix="/api/codebases", tags=["codebases"], dependencies=[Depends(require_api_token)])


class MoveBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    host: str = Field(min_length=1, max_length=255, description="the host it moves to (its workers' ISOLATOR_HOST)")

    @field_validator("host")
    @classmethod
    def _plain(cls, value: str) -> str:
        if any(ch.isspace() or ch == "@" or not ch.isprintable() for ch in value):
            raise ValueError("`host` must not contain spaces, control characters or '@'")
        return value


class MoveRefused(Exception):
    def __init__(self, status_code: int, reason: str) -> None:
        super().__init__(reason)
        self.status_code, self.reason = status_code, reason


async def checked_move(pool: asyncpg.Pool, client: Client, settings: Settings, codebase_id: str,
                       host: str) -> MoveRequest:
    """The move asked for, or MoveRefused with the reason: before anything is started."""
    row = await pool.fetchrow("SELECT name, host, repository_url FROM codebases WHERE id::text = $1", codebase_id)
    if row is None:
        raise MoveRefused(status.HTTP_404_NOT_FOUND, f"no codebase {codebase_id}")
    if row["host"] == host:
        raise MoveRefused(status.HTTP_409_CONFLICT, f"`{row['name']}` is on {host} already")
    if not row["repository_url"]:
        raise MoveRefused(status.HTTP_409_CONFLICT, f"`{row['name']}` was registered without a URL, so {host} "
                          "cannot clone it: register it again with `url` (its origin) first")
    if not await HostWorkerActivities(client).host_has_worker(settings.host_task_queue(host)):
        raise MoveRefused(status.HTTP_422_UNPROCESSABLE_CONTENT,
                          f"no worker of host `{host}` is running: start `isolator worker` there with "
                          f"ISOLATOR_HOST={host}, then move again (`GET /api/hosts` lists the hosts)")
    return MoveRequest(codebase_id, host)


async def start_move(client: Client, settings: Settings, request: MoveRequest, wait: bool) -> MoveReport | str:
    """The move's workflow started (a move of the codebase under way is joined); its report when `wait`, else its id."""
    handle = await client.start_workflow(
        MoveCodebaseWorkflow.run, request, id=move_workflow_id(request.codebase_id), task_queue=settings.task_queue,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING, static_summary=f"move to {request.host}")
    return await handle.result() if wait else handle.id


@router.post("/{codebase}/move", status_code=status.HTTP_202_ACCEPTED)
async def move_codebase(
    codebase: CodebaseKey, body: MoveBody, response: Response,
    pool: Annotated[asyncpg.Pool, Depends(get_pool)], client: Annotated[Client, Depends(get_client)],
    settings: Annotated[Settings, Depends(get_settings)], wait: bool = False,
) -> dict[str, Any]:
    """Move the codebase to `host`: cloned there, each worktree's work (uncommitted files too) carried over
    through origin, the records moved, each conversation told. `wait=true` answers with the move's report."""
    codebase_id = str(await codebase_id_of(pool, codebase))
    try:
        request = await checked_move(pool, client, settings, codebase_id, body.host)
    except MoveRefused as refused:
        raise HTTPException(refused.status_code, detail=refused.reason) from None
    started = await start_move(client, settings, request, wait)
    if isinstance(started, str):
        return {"workflow_id": started, "host": body.host, "status": "moving"}
    if started.outcome == "refused":
        raise HTTPException(status.HTTP_409_CONFLICT, detail=started.message)
    response.status_code = status.HTTP_200_OK
    return {"workflow_id": move_workflow_id(codebase_id), "status": "moved", **asdict(started)}
