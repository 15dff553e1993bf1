"""`/api/codebases`: register a repository (by path, clone URL, or both), list, read, change (its
agent) and forget them."""

from __future__ import annotations

import logging
import uuid
from typing import Annotated, Literal

import asyncpg
from fastapi import APIRouter, Depends, HTTPException, Response, status
from fastapi import Path as PathParameter
from pydantic import BaseModel, ConfigDict, Field, model_validator
from temporalio.client import Client, WorkflowFailureError
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError

from activities.codebases.registration import registered_elsewhere
from activities.database import codebase_from_row
from activities.git.paths import is_valid_codebase_name
from activities.warm.pool import ask_deleted_pool_to_end, ask_refill, warm_pool_view
from api.deps import get_client, get_pool, get_settings, require_api_token
from isolator.contracts.codebase import RepositorySource
from isolator.contracts.errors import NAME_TAKEN, USER_ERRORS
from isolator.repositories import is_clone_url
from isolator.settings import Settings
from workflows.codebase import RegisterCodebaseWorkflow, register_workflow_id

log = logging.getLogger(__name__)
router = APIRouter(prefix="/api/codebases", tags=["codebases"], dependencies=[Depends(require_api_token)])


AgentCommand = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=4096, pattern=r"^[^\x00]*$")]] | None,
    Field(max_length=100, description="the agent's argument list for this codebase; null: AGENT_COMMAND; "
                                      "[]: no agent"),
]


class AgentChoice(BaseModel):
    """The codebase's own agent driver (docs/agent-drivers.md), over AGENT, AGENT_EXECUTABLE and AGENT_ARGS."""

    model_config = ConfigDict(extra="forbid")

    agent: Literal["claude", "codex", "aider", "command"]
    executable: str | None = Field(None, min_length=1, max_length=4096, pattern=r"^[^\x00]*$",
                                   description="the program; default: `claude`, `codex` or `aider` on PATH")
    args: list[Annotated[str, Field(min_length=1, max_length=4096, pattern=r"^[^\x00]*$")]] = Field(
        default_factory=list, max_length=100, description="extra arguments: a model, a permission mode")

    @model_validator(mode="after")
    def _program(self) -> "AgentChoice":
        if self.agent == "command" and not self.executable:
            raise ValueError("the `command` agent needs `executable`, the program to run")
        return self


class CodebaseRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str | None = Field(None, min_length=1, max_length=4096, description="an existing checkout on the host")
    url: str | None = Field(None, min_length=1, max_length=2048, description="clone URL, or the checkout's upstream")
    name: str | None = Field(None, min_length=1, max_length=100)
    host: str | None = Field(None, min_length=1, max_length=255, description="defaults to this server's host")
    agent_command: AgentCommand = None
    agent: AgentChoice | None = None

    @model_validator(mode="after")
    def _check(self) -> "CodebaseRequest":
        if not self.path and not self.url:
            raise ValueError("give `path` (an existing checkout), `url` (to clone), or both")
        if self.path is not None and is_clone_url(self.path) and not self.path.startswith("/"):
            raise ValueError(f"`path` is a folder on the host, and `{self.path}` is a URL: pass it as `url`")
        if self.path is not None and not self.path.startswith(("/", "~")):
            raise ValueError("`path` must be absolute")
        if self.path is not None and any(ord(ch) < 32 for ch in self.path):
            raise ValueError("`path` must not contain control characters")
        if self.url is not None and not is_clone_url(self.url):
            raise ValueError("`url` must be an http(s), ssh, git or file URL, or user@host:path")
        if self.name is not None and not is_valid_codebase_name(self.name):
            raise ValueError("`name` may use letters, digits, `.`, `_` and `-`, starting with a letter or digit")
        if self.host is not None and any(ch.isspace() or ch == "@" or not ch.isprintable() for ch in self.host):
            raise ValueError("`host` must not contain spaces, control characters or '@'")
        return self


class CodebaseChange(BaseModel):
    """`PATCH /api/codebases/{id}`: what to change."""

    model_config = ConfigDict(extra="forbid")

    agent_command: AgentCommand = None
    agent: AgentChoice | None = Field(None, description="null: AGENT and the rest apply")
    warm_worktrees: int | None = Field(None, ge=0, le=20, description="warm worktrees kept for this codebase; "
                                                                      "null: WARM_WORKTREES; 0: none")

    @model_validator(mode="before")
    @classmethod
    def _not_host(cls, data: object) -> object:
        if isinstance(data, dict) and "host" in data:  # its worktrees' work must go with it (api/codebase_moves.py)
            raise ValueError('`host` is not changed here: `POST /api/codebases/{id}/move` with {"host": ...} '
                             "moves a codebase, its worktrees' work with it")
        return data


class CodebaseView(BaseModel):
    id: str
    name: str
    repository_url: str | None
    canonical_path: str
    default_branch: str
    host: str
    agent_command: list[str] | None  # null: AGENT_COMMAND applies; []: no agent
    agent: AgentChoice | None  # null: AGENT applies; wins over agent_command
    checkout_state: str | None = None  # rebuilding, rebuilt, lost (a lost disk), moving, moved; null: none of these
    checkout_note: str | None = None  # what happened to the checkout, and when it is `lost`, why


class RegisteredView(CodebaseView):
    created: bool


class WarmWorktreeView(BaseModel):
    path: str
    state: str
    base_commit: str | None
    failure: str | None
    disk_bytes: int | None


class WarmPoolView(BaseModel):
    """The codebase's warm worktrees (docs/warm.md): its size and each one's state and base commit."""

    size: int
    own_size: bool  # set for this codebase (PATCH `warm_worktrees`), not WARM_WORKTREES
    ready: int
    worktrees: list[WarmWorktreeView]


class CodebaseDetail(CodebaseView):
    warm_pool: WarmPoolView


@router.post("", status_code=status.HTTP_201_CREATED, response_model=RegisteredView)
async def register_codebase(
    body: CodebaseRequest,
    response: Response,
    client: Annotated[Client, Depends(get_client)],
    settings: Annotated[Settings, Depends(get_settings)],
    pool: Annotated[asyncpg.Pool, Depends(get_pool)],
) -> RegisteredView:
    source = RepositorySource(host=body.host or settings.host, path=body.path, url=body.url, name=body.name)
    try:
        registered = await client.execute_workflow(
            RegisterCodebaseWorkflow.run,
            source,
            id=register_workflow_id(source),
            task_queue=settings.task_queue,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            static_summary=f"register {body.url or body.path}",
        )
    except WorkflowFailureError as error:  # a registration started before mistakes were outcomes
        cause = error.cause
        if isinstance(cause, ApplicationError) and cause.type in USER_ERRORS:
            raise _refused(cause.type, cause.message) from None
        raise
    if registered.codebase is None:
        raise _refused(registered.problem_type, registered.problem or "the repository could not be registered")
    if not registered.created:
        if (elsewhere := registered_elsewhere(registered.codebase, _asked_host(body, settings), body.name)):
            raise HTTPException(status.HTTP_409_CONFLICT, detail=elsewhere)  # never the other one, silently
        response.status_code = status.HTTP_200_OK
    await _set_agent(pool, registered.codebase.id, body)
    row = await pool.fetchrow("SELECT * FROM codebases WHERE id = $1", registered.codebase.id)
    return RegisteredView(**_view(row).model_dump(), created=registered.created)


def _asked_host(body: CodebaseRequest, settings: Settings) -> str | None:
    """The host the request asks for: the one named, or this server's for a checkout's path; by URL alone, any."""
    return body.host or (settings.host if body.path else None)


def _refused(error_type: str | None, message: str) -> HTTPException:
    code = status.HTTP_409_CONFLICT if error_type == NAME_TAKEN else status.HTTP_422_UNPROCESSABLE_CONTENT
    return HTTPException(code, detail=message)


# A codebase in the path: its id or its name, as `GET /api/environments?codebase=` takes it.
CodebaseKey = Annotated[str, PathParameter(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$",
                                           description="a codebase's id or name")]


async def codebase_id_of(pool: asyncpg.Pool, key: str) -> uuid.UUID:
    """The id of the codebase `key` names (an id first: a name may look like one), else 404."""
    found = await pool.fetchval(
        "SELECT id FROM codebases WHERE id::text = $1 UNION ALL SELECT id FROM codebases WHERE name = $1 LIMIT 1", key)
    if found is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, detail=f"no codebase `{key}`: pass a codebase's id or name, "
                                                              "as `GET /api/codebases` lists them")
    return found


@router.patch("/{codebase}", response_model=CodebaseDetail)
async def change_codebase(
    codebase: CodebaseKey, body: CodebaseChange, pool: Annotated[asyncpg.Pool, Depends(get_pool)],
    client: Annotated[Client, Depends(get_client)], settings: Annotated[Settings, Depends(get_settings)],
) -> CodebaseDetail:
    """Set the codebase's `agent_command` (a list of arguments, null for AGENT_COMMAND, [] for none), its
    `agent` (a driver, null for AGENT) and its `warm_worktrees` (null for WARM_WORKTREES)."""
    codebase_id = await codebase_id_of(pool, codebase)
    await _set_agent(pool, str(codebase_id), body)
    if "warm_worktrees" in body.model_fields_set:
        row = await pool.fetchrow("UPDATE codebases SET warm_worktrees = $2 WHERE id = $1 RETURNING *", codebase_id,
                                  body.warm_worktrees)
        if row is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, detail=f"no codebase {codebase_id}")
        await ask_refill(client, settings, codebase_from_row(row))  # grows, shrinks or empties the pool now
    return await get_codebase(str(codebase_id), pool, settings)


async def _set_agent(pool: asyncpg.Pool, codebase_id: str, body: CodebaseRequest | CodebaseChange) -> None:
    """The fields the body names; the others are left as they are."""
    for column in ("agent_command", "agent"):  # names of ours, never input
        if column not in body.model_fields_set:
            continue
        value = getattr(body, column)
        value = value.model_dump() if isinstance(value, BaseModel) else value
        updated = await pool.execute(f"UPDATE codebases SET {column} = $2 WHERE id = $1", uuid.UUID(codebase_id),
                                     value)
        if updated == "UPDATE 0":
            raise HTTPException(status.HTTP_404_NOT_FOUND, detail=f"no codebase {codebase_id}")


@router.get("", response_model=list[CodebaseView])
async def list_codebases(pool: Annotated[asyncpg.Pool, Depends(get_pool)]) -> list[CodebaseView]:
    rows = await pool.fetch("SELECT * FROM codebases ORDER BY name")
    return [_view(row) for row in rows]


@router.get("/{codebase}", response_model=CodebaseDetail)
async def get_codebase(codebase: CodebaseKey, pool: Annotated[asyncpg.Pool, Depends(get_pool)],
                       settings: Annotated[Settings, Depends(get_settings)]) -> CodebaseDetail:
    codebase_id = await codebase_id_of(pool, codebase)
    row = await pool.fetchrow("SELECT * FROM codebases WHERE id = $1", codebase_id)
    if row is None:  # forgotten meanwhile
        raise HTTPException(status.HTTP_404_NOT_FOUND, detail=f"no codebase `{codebase}`")
    warm = await warm_pool_view(pool, settings, str(codebase_id))
    return CodebaseDetail(**_view(row).model_dump(), warm_pool=WarmPoolView(
        size=warm.size, own_size=row["warm_worktrees"] is not None, ready=warm.ready,
        worktrees=[WarmWorktreeView(**vars(worktree)) for worktree in warm.worktrees]))


@router.delete("/{codebase}", status_code=status.HTTP_204_NO_CONTENT)
async def delete_codebase(codebase: CodebaseKey, pool: Annotated[asyncpg.Pool, Depends(get_pool)],
                          client: Annotated[Client, Depends(get_client)]) -> Response:
    """Forget a codebase whose worktrees are all gone (a hibernated one counts as there); its checkout on
    disk is left as it is, and so are the archives in it (`refs/isolator/archive/`). Its warm pool removes
    its warm worktrees and ends, in the background on the codebase's host."""
    codebase_id = await codebase_id_of(pool, codebase)
    async with pool.acquire() as connection, connection.transaction():
        row = await connection.fetchrow("SELECT name FROM codebases WHERE id = $1 FOR UPDATE", codebase_id)
        if row is None:
            raise HTTPException(status.HTTP_404_NOT_FOUND, detail=f"no codebase {codebase_id}")
        active = await connection.fetchval(
            "SELECT count(*) FROM isolation_environments WHERE codebase_id = $1 AND status IN ('active', 'hibernated')",
            codebase_id,
        )
        if active:
            raise HTTPException(
                status.HTTP_409_CONFLICT,
                detail=f"`{row['name']}` still has {active} active or hibernated environment(s): remove them first "
                       "(`/worktree remove`, or `GET /api/environments?codebase=...` to see them)",
            )
        await connection.execute("DELETE FROM codebases WHERE id = $1", codebase_id)
    try:
        await ask_deleted_pool_to_end(client, str(codebase_id))
    except RPCError as error:  # the pool finds its codebase gone at its next look (FETCH_INTERVAL_SECONDS)
        log.warning("the warm pool of deleted `%s` not told at once: %s", row["name"], error)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


def _view(row: asyncpg.Record) -> CodebaseView:
    return CodebaseView(id=str(row["id"]), name=row["name"], repository_url=row["repository_url"],
                        canonical_path=row["canonical_path"], default_branch=row["default_branch"], host=row["host"],
                        agent_command=row["agent_command"], agent=row["agent"],
                        checkout_state=row["checkout_state"], checkout_note=row["checkout_note"])
