"""`/api/environments`: the isolation environments, read; removed through their own workflows (the
same removal as `/worktree remove`, archived), and restored (the same as `/worktree restore`)."""

from __future__ import annotations

import uuid
from typing import Annotated, Literal

import asyncpg
from fastapi import APIRouter, Depends, HTTPException, Query, status
from pydantic import BaseModel
from temporalio.client import Client

from activities.database import codebase_from_row
from activities.environments.signals import EnvironmentSignalActivities
from api.deps import get_client, get_pool, get_settings, require_api_token
from isolator.contracts.archive import RestoreReport, RestoreRequest
from isolator.contracts.environment import ASKED_BY_NAME, DestroyEnvironmentInput, DestroyRequest, EnvironmentRef
from isolator.contracts.worktree import RemovalReport
from isolator.settings import Settings

# What a removal is recorded with, by where it was asked for (both in ASKED_BY_NAME).
THROUGH_THE_API = "removed through the API"
FROM_THE_DASHBOARD = "removed from the dashboard"

router = APIRouter(prefix="/api/environments", tags=["environments"], dependencies=[Depends(require_api_token)])

_SELECT = """
SELECT e.id, e.workflow_type, e.workflow_id, e.working_path, e.branch_name, e.status, e.setup_state,
       e.created_at, e.destroyed_at, e.removal_reason, e.created_by_platform, c.name AS codebase,
       e.disk_bytes, e.disk_measured_at, e.merge_proof, e.branch_tip, e.restored_as,
       e.metadata ->> 'restored_from' AS restored_from,
       (SELECT coalesce(array_agg(a.archive_ref ORDER BY a.archived_at DESC), '{}') FROM isolation_environments a
         WHERE a.codebase_id = e.codebase_id AND a.branch_name = e.branch_name AND a.archive_ref IS NOT NULL
           AND a.archive_pruned_at IS NULL) AS archive_refs,
       coalesce(array_agg(v.platform || ':' || v.platform_conversation_id ORDER BY v.id)
                FILTER (WHERE v.id IS NOT NULL), '{}') AS conversations,
       (SELECT min(port) FROM port_allocations p WHERE p.environment_id = e.id) AS first_port,
       (SELECT max(port) FROM port_allocations p WHERE p.environment_id = e.id) AS last_port,
       (SELECT row_to_json(pr) FROM (SELECT number, url, repository, remote_branch AS branch, base_branch AS base,
                                            title, draft, state, checks, origin, ci_sha, ci_state,
                                            fix_attempts, fixing_stopped
                                     FROM pull_requests p WHERE p.codebase_id = e.codebase_id
                                       AND p.branch_name = e.branch_name) pr)::text AS pull_request
FROM isolation_environments e
JOIN codebases c ON c.id = e.codebase_id
LEFT JOIN conversations v ON v.environment_id = e.id
"""


class PullRequestView(BaseModel):
    """The pull request the environment's branch delivers to (docs/results.md), as last recorded."""

    number: int
    url: str
    repository: str  # owner/name
    branch: str  # its head, on origin
    base: str
    title: str
    draft: bool
    state: str  # open, closed, merged: as GitHub said at the last delivery or `/status`
    checks: str | None  # "2 passed, 1 pending", as last read by `/status`
    origin: str  # opened: by the service; followed: a PR conversation's own
    # The pull-request loop (docs/pr-loop.md): the last head CI judged and how, the fix runs CI started in a
    # row, and why fixing stopped; `max_fix_attempts` is AUTOFIX_MAX_ATTEMPTS (0: AUTOFIX=off).
    ci_sha: str | None = None
    ci_state: str | None = None
    fix_attempts: int = 0
    max_fix_attempts: int = 0
    fixing_stopped: str | None = None


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
    # why it was removed: "closed", "removed by command", "45 days inactive", or "merged: " and the proof
    removal_reason: str | None
    # real blocks, as the scheduled cleanup last measured them (None until it has)
    disk_bytes: int | None
    disk_measured_at: str | None
    merge_proof: str | None  # when git or GitHub proves its work is in the default branch: which check
    # archives of this branch not yet pruned, newest first: this environment's own (when removed or
    # hibernated) and earlier ones'; `POST /api/environments/{id}/restore` brings a removed one back
    archive_refs: list[str]
    branch_tip: str | None  # the branch's commit when it was archived
    restored_as: str | None  # the environment a restore brought it back as
    restored_from: str | None  # the removed environment this one is the restore of
    pull_request: PullRequestView | None = None


def _view(row: asyncpg.Record, settings: Settings | None = None) -> EnvironmentView:
    pull = PullRequestView.model_validate_json(row["pull_request"]) if row["pull_request"] else None
    if pull is not None and settings is not None:
        pull.max_fix_attempts = settings.autofix_max_attempts if settings.autofix == "on" else 0
    return EnvironmentView(
        id=str(row["id"]), codebase=row["codebase"], workflow_type=row["workflow_type"],
        workflow_id=row["workflow_id"], branch=row["branch_name"], working_path=row["working_path"],
        status=row["status"], setup_state=row["setup_state"],
        ports=f"{row['first_port']}-{row['last_port']}" if row["first_port"] is not None else None,
        conversations=list(row["conversations"]), created_by_platform=row["created_by_platform"],
        created_at=row["created_at"].isoformat(),
        destroyed_at=row["destroyed_at"].isoformat() if row["destroyed_at"] else None,
        removal_reason=row["removal_reason"], disk_bytes=row["disk_bytes"],
        disk_measured_at=row["disk_measured_at"].isoformat() if row["disk_measured_at"] else None,
        merge_proof=row["merge_proof"], archive_refs=list(row["archive_refs"]), branch_tip=row["branch_tip"],
        restored_as=str(row["restored_as"]) if row["restored_as"] else None, restored_from=row["restored_from"],
        pull_request=pull,
    )


@router.get("", response_model=list[EnvironmentView])
async def list_environments(
    pool: Annotated[asyncpg.Pool, Depends(get_pool)],
    codebase: Annotated[str | None, Query(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$",
                                          description="a codebase's name or id")] = None,
    environment_status: Annotated[Literal["active", "hibernated", "destroyed"] | None, Query(alias="status")] = None,
    conversation: Annotated[str | None, Query(min_length=3, max_length=300, pattern=r"^[a-z]+:[^\x00-\x1f\x7f]+$",
                                              description="`platform:conversation id`")] = None,
    settings: Annotated[Settings | None, Depends(get_settings)] = None,
) -> list[EnvironmentView]:
    platform, _, conversation_id = (conversation or "").partition(":")
    if codebase is not None and not await pool.fetchval(
            "SELECT EXISTS (SELECT 1 FROM codebases WHERE name = $1 OR id::text = $1)", codebase):
        # an empty list would read as "no environments" where the codebase was misnamed
        raise HTTPException(status.HTTP_404_NOT_FOUND, detail=f"no codebase `{codebase}`: pass a codebase's name "
                                                              "or id, as `GET /api/codebases` lists them")
    rows = await pool.fetch(
        _SELECT + """
        WHERE ($1::text IS NULL OR c.name = $1 OR c.id::text = $1) AND ($2::text IS NULL OR e.status = $2)
          AND ($3::text IS NULL OR e.id IN (SELECT environment_id FROM conversations
                                           WHERE platform = $3 AND platform_conversation_id = $4))
        GROUP BY e.id, c.name ORDER BY e.created_at, e.id""",
        codebase, environment_status, platform or None, conversation_id,
    )
    return [_view(row, settings) for row in rows]


@router.get("/{environment_id}", response_model=EnvironmentView)
async def get_environment(environment_id: uuid.UUID, pool: Annotated[asyncpg.Pool, Depends(get_pool)],
                          settings: Annotated[Settings | None, Depends(get_settings)] = None) -> EnvironmentView:
    row = await pool.fetchrow(_SELECT + " WHERE e.id = $1 GROUP BY e.id, c.name", environment_id)
    if row is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, detail=f"no environment {environment_id}")
    return _view(row, settings)


async def environment_ref(pool: asyncpg.Pool, environment_id: uuid.UUID) -> EnvironmentRef | None:
    """What the environment's workflow is told about its environment; None when there is no such row."""
    row = await pool.fetchrow(
        """SELECT e.*, c.id AS c_id, c.name AS c_name, c.canonical_path AS c_canonical_path,
                  c.default_branch AS c_default_branch, c.host AS c_host, c.repository_url AS c_repository_url
           FROM isolation_environments e JOIN codebases c ON c.id = e.codebase_id WHERE e.id = $1""",
        environment_id,
    )
    if row is None:
        return None
    return EnvironmentRef(
        environment_id=str(row["id"]), codebase=codebase_from_row(row, prefix="c_"), working_path=row["working_path"],
        branch=row["branch_name"], workflow_type=row["workflow_type"], workflow_id=row["workflow_id"],
        platform=row["created_by_platform"], provider=row["provider"],
    )


class RemovalView(BaseModel):
    outcome: str  # removed, already_gone
    branch_outcome: str  # deleted, kept, archived, absent
    archive_refs: list[str]
    message: str


@router.delete("/{environment_id}", response_model=RemovalView,
               responses={409: {"description": "refused: uncommitted changes, or the agent is running (use force)"}})
async def remove_environment(
    environment_id: uuid.UUID,
    pool: Annotated[asyncpg.Pool, Depends(get_pool)],
    client: Annotated[Client, Depends(get_client)],
    settings: Annotated[Settings, Depends(get_settings)],
    force: Annotated[bool, Query(description="remove even with uncommitted changes or a running agent (stopped "
                                             "first); every removal is archived and can be restored")] = False,
) -> RemovalView:
    """The same removal as `/worktree remove [--force]`, through the environment's workflow."""
    try:
        report = await remove(environment_id, pool, client, settings, force=force, reason=THROUGH_THE_API)
    except RemovalRefused as refused:
        raise HTTPException(status.HTTP_409_CONFLICT, detail=_refusal(refused.report, refused.environment)) from None
    return RemovalView(outcome=report.outcome, branch_outcome=report.branch_outcome,
                       archive_refs=list(report.archive_refs), message=report.message)


class RemovalRefused(Exception):
    """The environment's workflow refused the removal; each caller says so in its own words."""

    def __init__(self, report: RemovalReport, environment: EnvironmentRef) -> None:
        super().__init__(report.message)
        self.report, self.environment = report, environment


async def remove(environment_id: uuid.UUID, pool: asyncpg.Pool, client: Client, settings: Settings, force: bool,
                 reason: str) -> RemovalReport:
    """Remove through the environment's workflow; `reason` is what the removal is recorded with (one of
    ASKED_BY_NAME: a dirty worktree is then refused unless forced). A 404 when there is no such environment."""
    if reason not in ASKED_BY_NAME:
        raise ValueError(f"a removal asked for by name is recorded with one of {ASKED_BY_NAME}, not {reason!r}")
    environment = await environment_ref(pool, environment_id)
    if environment is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, detail=f"no environment {environment_id}")
    request = DestroyRequest(force=force, reason=reason, key=f"api:{uuid.uuid4()}")
    signals = EnvironmentSignalActivities(client, settings.task_queue)
    report = await signals.destroy_environment(DestroyEnvironmentInput(environment, request))
    if report.outcome == "refused":
        raise RemovalRefused(report, environment)
    return report


def _refusal(report: RemovalReport, environment: EnvironmentRef) -> str:
    """A refusal in the API's words: the chat's names commands (`/worktree remove --force`)."""
    again = f"`DELETE /api/environments/{environment.environment_id}?force=true`"
    if report.refused_because == "uncommitted_changes":
        return (f"`{environment.working_path}` has uncommitted changes, so it was not removed. {again} removes it "
                "anyway: it is archived first, and `POST /api/environments/"
                f"{environment.environment_id}/restore` brings it back with its changes.")
    if report.refused_because == "agent_running":
        return (f"The agent is running in `{environment.branch}`, so it was not removed. {again} stops the run "
                "and removes it (archived first).")
    return report.message


class RestoreView(BaseModel):
    # "brought_back": the removed files went into the active worktree of the same branch (environment_id)
    outcome: Literal["restored", "woken", "already_restored", "brought_back"]
    environment_id: str  # the restored environment: a new one for a removed one, the same for a hibernated one
    working_path: str
    branch: str
    message: str


_REFUSALS = {"not_found": status.HTTP_404_NOT_FOUND, "refused": status.HTTP_409_CONFLICT,
             "limit": status.HTTP_409_CONFLICT, "kept": status.HTTP_409_CONFLICT}


@router.post("/{environment_id}/restore", response_model=RestoreView,
             responses={404: {"description": "no archive to restore: never removed, pruned, or no such environment"},
                        409: {"description": "refused, with the reason: its branch moved or is checked out, its "
                                             "path or identity is taken, or the codebase is at its limit"}})
async def restore_environment(
    environment_id: uuid.UUID,
    client: Annotated[Client, Depends(get_client)],
    settings: Annotated[Settings, Depends(get_settings)],
) -> RestoreView:
    """The same restore as `/worktree restore`: the worktree back from its archive, on its branch, with its
    uncommitted and untracked files; a hibernated one is woken."""
    workflow_id = f"restore:api:{uuid.uuid4()}"
    report = await client.execute_workflow(
        "RestoreEnvironmentWorkflow", RestoreRequest(str(environment_id), key=workflow_id), id=workflow_id,
        task_queue=settings.task_queue, result_type=RestoreReport,
    )
    if report.outcome in _REFUSALS:
        raise HTTPException(_REFUSALS[report.outcome], detail=report.message)
    assert report.environment_id is not None and report.working_path is not None and report.branch is not None
    return RestoreView(outcome=report.outcome, environment_id=report.environment_id,  # type: ignore[arg-type]
                       working_path=report.working_path, branch=report.branch, message=report.message)
