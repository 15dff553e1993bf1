"""`/environments/{id}`: what `/worktree why` says, its state (a refused removal included), its disk
measured as the page is opened, its runs, its ports and its workflows in the Temporal UI; and its
actions, each the same workflow chat and REST use: remove (asked first; archived, forced when it has
uncommitted changes), restore, and set-up again. What the actions answer is worded for the dashboard."""

from __future__ import annotations

import asyncio
import uuid
from datetime import timedelta
from typing import Annotated
from urllib.parse import quote

import asyncpg
from fastapi import APIRouter, Depends, HTTPException, Request
from fastapi.responses import Response
from temporalio.client import Client, WorkflowFailureError
from temporalio.service import RPCError

from activities.environments.signals import EnvironmentSignalActivities
from api import environments as rest
from api.dashboard.access import Refused, Session, actor, viewer
from api.dashboard.disk import measure_worktree, next_cleanup
from api.dashboard.refusals import refusal
from api.dashboard.rendering import PageRoute, render
from api.dashboard.verdicts import REFUSED_ADVICE, refused_words
from api.deps import get_client, get_pool, get_settings
from api.runs import list_runs
from isolator.contracts.dashboard import ExplainEnvironmentInput
from isolator.contracts.worktree import RemovalReport
from isolator.settings import Settings
from workflows.chat.worktree_texts import setup_ran

router = APIRouter(route_class=PageRoute)

WHY_SECONDS = 60  # the survey of a large codebase takes a while; the page says so when it takes longer
# The worktrees this one is the restore of: a restore is a new environment, and each earlier one has its runs.
_EARLIER = """
WITH RECURSIVE earlier(id, removed) AS (
  SELECT id, destroyed_at FROM isolation_environments WHERE restored_as = $1
  UNION SELECT e.id, e.destroyed_at FROM isolation_environments e JOIN earlier ON e.restored_as = earlier.id
)
SELECT id FROM earlier ORDER BY removed DESC NULLS LAST
"""


async def _environment(pool: asyncpg.Pool, environment_id: uuid.UUID,
                       settings: Settings | None = None) -> rest.EnvironmentView:
    try:
        return await rest.get_environment(environment_id, pool, settings)
    except HTTPException:
        raise Refused(404, f"No environment {environment_id}.") from None


async def _why(client: Client, settings: Settings, pool: asyncpg.Pool, environment: rest.EnvironmentView) -> str:
    if environment.status != "active":
        return f"It is {environment.status}: " + (environment.removal_reason or "no reason recorded") + "."
    ref = await rest.environment_ref(pool, uuid.UUID(environment.id))
    assert ref is not None
    try:
        why = await client.execute_workflow(
            "ExplainEnvironmentWorkflow", ExplainEnvironmentInput(ref.codebase, environment.id),
            id=f"dashboard:why:{uuid.uuid4()}", task_queue=settings.task_queue,
            execution_timeout=timedelta(seconds=WHY_SECONDS),
        )
    except (WorkflowFailureError, RPCError) as error:
        return f"Git could not be asked just now ({error}); reload the page to try again."
    return why or "It is no longer active."


def temporal_links(settings: Settings, environment: rest.EnvironmentView, run_ids: list[str]) -> list[tuple[str, str]]:
    """(title, URL) of the environment's workflows in the Temporal UI, when TEMPORAL_UI_URL is known."""
    if not settings.temporal_ui_url:
        return []
    base = f"{settings.temporal_ui_url.rstrip('/')}/namespaces/{quote(settings.temporal_namespace, safe='')}/workflows"
    query = quote(f'IsolatorBranch = "{environment.branch}" AND IsolatorCodebase = "{environment.codebase}"', safe="")
    links = [("its environment workflow", f"{base}/{quote(f'environment:{environment.id}', safe='')}"),
             ("every workflow of its branch", f"{base}?query={query}")]
    links += [(f"agent run {run_id[:8]}", f"{base}/{quote(f'agent-run:{run_id}', safe='')}") for run_id in run_ids[:10]]
    return links


@router.get("/environments/{environment_id}", include_in_schema=False)
async def environment_page(
    environment_id: uuid.UUID,
    request: Request,
    session: Annotated[Session, Depends(viewer)],
    pool: Annotated[asyncpg.Pool, Depends(get_pool)],
    client: Annotated[Client, Depends(get_client)],
    settings: Annotated[Settings, Depends(get_settings)],
) -> Response:
    environment = await _environment(pool, environment_id, settings)
    runs = await list_runs(pool, environment=environment_id)
    for earlier in await pool.fetch(_EARLIER, environment_id):  # newest first, as the runs are
        runs += await list_runs(pool, environment=earlier["id"])
    # git's answer, the refusal, the disk count and the schedule are asked at once: the page waits for the slowest
    why, refused, disk, cleanup_at = await asyncio.gather(
        _why(client, settings, pool, environment),
        refusal(client, environment.id) if environment.status == "active" else _nothing(),
        measure_worktree(pool, settings, environment_id), next_cleanup(client))
    return render(request, session, "environment.html", environment=environment, runs=runs, why=why,
                  refused=f"{refused_words(refused)}; {REFUSED_ADVICE}." if refused else None,
                  disk=disk, next_cleanup=cleanup_at,
                  links=temporal_links(settings, environment, [run.id for run in runs]))


async def _nothing() -> None:
    return None


@router.get("/environments/{environment_id}/remove", include_in_schema=False)
async def confirm_removal(
    environment_id: uuid.UUID,
    request: Request,
    session: Annotated[Session, Depends(viewer)],
    pool: Annotated[asyncpg.Pool, Depends(get_pool)],
    settings: Annotated[Settings, Depends(get_settings)],
) -> Response:
    return render(request, session, "confirm_removal.html", environment=await _environment(pool, environment_id),
                  retention_days=settings.archive_retention_days)


@router.post("/environments/{environment_id}/remove", include_in_schema=False)
async def remove(
    environment_id: uuid.UUID,
    request: Request,
    form: Annotated[dict[str, str], Depends(actor)],
    pool: Annotated[asyncpg.Pool, Depends(get_pool)],
    client: Annotated[Client, Depends(get_client)],
    settings: Annotated[Settings, Depends(get_settings)],
) -> Response:
    environment = await _environment(pool, environment_id)
    force = form.get("force") == "on"
    try:
        removed = await rest.remove(environment_id, pool, client, settings, force=force, reason=rest.FROM_THE_DASHBOARD)
    except rest.RemovalRefused as refused:
        return _outcome(request, _not_removed(refused.report, environment.branch), environment, ok=False,
                        may_force=not force)
    except HTTPException as gone:
        return _outcome(request, f"Not removed: {gone.detail}.", environment, ok=False)
    return _outcome(request, _removed(removed, environment.branch, settings.archive_retention_days), environment)


def _not_removed(report: RemovalReport, branch: str) -> str:
    """A refusal in the dashboard's words: what to do here (chat's message names chat's commands)."""
    if report.refused_because == "uncommitted_changes":
        return (f"Not removed: `{branch}` has uncommitted changes. Commit or discard them first, or remove it "
                "anyway with the button below: it is archived first, and Restore brings it back with its changes.")
    if report.refused_because == "agent_running":
        return (f"Not removed: the agent is running in `{branch}`. Stop its run on the run's page first, or "
                "remove it anyway with the button below (the run is stopped first).")
    return f"Not removed: {report.message}"


def _removed(report: RemovalReport, branch: str, retention_days: int) -> str:
    done = "was removed" if report.outcome == "removed" else "was already gone from disk; its record was closed"
    if report.archive_refs:
        return (f"`{branch}` {done}. Everything in it, uncommitted and untracked files included, was archived as "
                f"`{report.archive_refs[0]}`: Restore, on its page or in its codebase's archives, brings it back "
                f"for {retention_days} days.")
    return f"`{branch}` {done}."


@router.post("/environments/{environment_id}/restore", include_in_schema=False)
async def restore(
    environment_id: uuid.UUID,
    request: Request,
    form: Annotated[dict[str, str], Depends(actor)],
    pool: Annotated[asyncpg.Pool, Depends(get_pool)],
    client: Annotated[Client, Depends(get_client)],
    settings: Annotated[Settings, Depends(get_settings)],
) -> Response:
    environment = await _environment(pool, environment_id)
    try:
        restored = await rest.restore_environment(environment_id, client, settings)
    except HTTPException as refused:
        return _outcome(request, f"Not restored: {refused.detail}", environment, ok=False)
    return _outcome(request, restored.message, await _environment(pool, uuid.UUID(restored.environment_id)))


@router.post("/environments/{environment_id}/setup", include_in_schema=False)
async def set_up_again(
    environment_id: uuid.UUID,
    request: Request,
    form: Annotated[dict[str, str], Depends(actor)],
    pool: Annotated[asyncpg.Pool, Depends(get_pool)],
    client: Annotated[Client, Depends(get_client)],
    settings: Annotated[Settings, Depends(get_settings)],
) -> Response:
    environment = await _environment(pool, environment_id)
    ref = await rest.environment_ref(pool, environment_id)
    if ref is None or environment.status != "active":
        return _outcome(request, f"Not set up: `{environment.branch}` is {environment.status}.", environment, ok=False)
    try:
        state = await EnvironmentSignalActivities(client, settings.task_queue).set_up_again(ref)
    except RPCError as error:
        return _outcome(request, f"Not set up: its workflow did not answer ({error.message}).", environment, ok=False)
    if state == "failed":  # chat's words point at the message above and at `/worktree setup`
        message = (f"The set-up of `{environment.branch}` failed again: its output is in the environment's "
                   "conversation. Fix it, then Run set-up again.")
    else:
        message = setup_ran(environment.branch, state)
    return _outcome(request, message, environment, ok=state in ("ready", "skipped"))


def _outcome(request: Request, message: str, environment: rest.EnvironmentView, ok: bool = True,
             may_force: bool = False) -> Response:
    return render(request, request.state.session, "outcome.html", message=message, ok=ok,
                  back=(f"/environments/{environment.id}", f"environment {environment.branch}"),
                  force_form=f"/environments/{environment.id}/remove" if may_force else None)
