"""`/api/automations`: the operator's automations (docs/automations.md): list, make, change, remove,
pause, resume and run now. A repository's own (`[[automations]]` in `.isolator.toml`) are listed, paused,
resumed and run here too, and changed only by a push to its default branch."""

from __future__ import annotations

import dataclasses
import uuid
from typing import Annotated, Any

import asyncpg
from fastapi import APIRouter, Body, Depends, HTTPException, Response, status
from fastapi import Path as PathParameter
from temporalio.client import Client
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError

from activities.automations import schedules
from activities.automations.records import AutomationRecords, StoredAutomation
from activities.database import codebase_from_row
from api.automation_views import automation_view
from api.deps import get_client, get_pool, get_settings, require_api_token
from isolator.automation_rules import NAME, read_automation
from isolator.contracts.automation import AutomationProblem, FiringInput
from isolator.settings import Settings
from workflows.automation_reconcile import ReconcileAutomationsWorkflow, reconcile_workflow_id

router = APIRouter(prefix="/api/automations", tags=["automations"], dependencies=[Depends(require_api_token)])
Name = Annotated[str, PathParameter(pattern=NAME.pattern)]
Definition = Annotated[dict[str, Any], Body(description="the keys of `[[automations]]`, and `codebase` (its name)")]


@router.get("")
async def list_automations(pool: Annotated[asyncpg.Pool, Depends(get_pool)],
                           client: Annotated[Client, Depends(get_client)]) -> dict[str, Any]:
    stored = await AutomationRecords(pool).all()
    return {"automations": [await automation_view(pool, client, each) for each in stored]}


@router.post("/reconcile")
async def reconcile_repository_automations(
    codebase: Annotated[str, Body(embed=True, description="the codebase's name")],
    pool: Annotated[asyncpg.Pool, Depends(get_pool)], client: Annotated[Client, Depends(get_client)],
    settings: Annotated[Settings, Depends(get_settings)],
) -> dict[str, Any]:
    """Read the codebase's `[[automations]]` from its default branch at origin now, as a push there does
    (for a repository whose pushes the service does not hear of)."""
    row = await pool.fetchrow("SELECT * FROM codebases WHERE name = $1", codebase)
    if row is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"there is no codebase `{codebase}` (GET /api/codebases)")
    done = await client.execute_workflow(
        ReconcileAutomationsWorkflow.run, codebase_from_row(row), task_queue=settings.task_queue,
        id=reconcile_workflow_id(str(row["id"]), f"asked-{uuid.uuid4().hex[:12]}"),
        static_summary=f"automations of {codebase}, asked through the API")
    return dataclasses.asdict(done)


@router.get("/{name}")
async def get_automation(name: Name, pool: Annotated[asyncpg.Pool, Depends(get_pool)],
                         client: Annotated[Client, Depends(get_client)]) -> dict[str, Any]:
    return await automation_view(pool, client, await _existing(pool, name), firings=20)


@router.post("", status_code=status.HTTP_201_CREATED)
async def make_automation(definition: Definition, pool: Annotated[asyncpg.Pool, Depends(get_pool)],
                          client: Annotated[Client, Depends(get_client)],
                          settings: Annotated[Settings, Depends(get_settings)]) -> dict[str, Any]:
    records = AutomationRecords(pool)
    automation, codebase_id = await _read(pool, definition)
    if await records.get(automation.name) is not None:
        raise HTTPException(status.HTTP_409_CONFLICT,
                            f"an automation `{automation.name}` exists: change it with PUT /api/automations/"
                            f"{automation.name}, or choose another name")
    await records.save(automation, codebase_id)
    await schedules.sync_schedule(client, automation, settings.task_queue, paused=False)
    return await automation_view(pool, client, await _existing(pool, automation.name))


@router.put("/{name}")
async def change_automation(name: Name, definition: Definition, pool: Annotated[asyncpg.Pool, Depends(get_pool)],
                            client: Annotated[Client, Depends(get_client)],
                            settings: Annotated[Settings, Depends(get_settings)]) -> dict[str, Any]:
    current = await _existing(pool, name)
    _operators(current)
    automation, codebase_id = await _read(pool, {**definition, "name": name})
    await AutomationRecords(pool).save(automation, codebase_id)
    await schedules.sync_schedule(client, automation, settings.task_queue, paused=current.paused)
    return await automation_view(pool, client, await _existing(pool, name))


@router.delete("/{name}", status_code=status.HTTP_204_NO_CONTENT)
async def remove_automation(name: Name, pool: Annotated[asyncpg.Pool, Depends(get_pool)],
                            client: Annotated[Client, Depends(get_client)]) -> Response:
    _operators(await _existing(pool, name))
    await schedules.remove_schedule(client, name)
    await AutomationRecords(pool).delete(name)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.post("/{name}/pause")
async def pause_automation(name: Name, pool: Annotated[asyncpg.Pool, Depends(get_pool)],
                           client: Annotated[Client, Depends(get_client)]) -> dict[str, Any]:
    return await _set_paused(pool, client, name, True, "paused by the operator")


@router.post("/{name}/resume")
async def resume_automation(name: Name, pool: Annotated[asyncpg.Pool, Depends(get_pool)],
                            client: Annotated[Client, Depends(get_client)]) -> dict[str, Any]:
    return await _set_paused(pool, client, name, False, "resumed by the operator")


@router.post("/{name}/run", status_code=status.HTTP_202_ACCEPTED)
async def run_automation(name: Name, pool: Annotated[asyncpg.Pool, Depends(get_pool)],
                         client: Annotated[Client, Depends(get_client)],
                         settings: Annotated[Settings, Depends(get_settings)]) -> dict[str, Any]:
    stored = await _existing(pool, name)
    if stored.paused:
        raise HTTPException(status.HTTP_409_CONFLICT, f"`{name}` is paused ({stored.paused_reason}): resume it first")
    return {"workflowId": await start_firing(client, settings, FiringInput(name, trigger="run now"),
                                             f"run-{uuid.uuid4().hex[:12]}")}


async def start_firing(client: Client, settings: Settings, firing: FiringInput, key: str) -> str:
    """A firing by an event or a person: its id carries the event's own, so a redelivery fires once."""
    workflow_id = f"automation:{firing.name}:{key}"
    try:
        await client.start_workflow(schedules.FIRING_WORKFLOW, firing, id=workflow_id, task_queue=settings.task_queue,
                                    static_summary=f"automation {firing.name}, by {firing.trigger}",
                                    # A redelivery after the firing ended fires nothing either.
                                    id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE)
    except WorkflowAlreadyStartedError:  # a redelivery: the firing it started goes on, or has ended
        pass
    return workflow_id


async def _set_paused(pool: asyncpg.Pool, client: Client, name: str, paused: bool, note: str) -> dict[str, Any]:
    await _existing(pool, name)
    await AutomationRecords(pool).set_paused(name, paused, note if paused else "")
    await schedules.pause_schedule(client, name, paused, note)
    return await automation_view(pool, client, await _existing(pool, name))


async def _existing(pool: asyncpg.Pool, name: str) -> StoredAutomation:
    stored = await AutomationRecords(pool).get(name)
    if stored is None:
        raise HTTPException(status.HTTP_404_NOT_FOUND, f"there is no automation `{name}` (GET /api/automations lists them)")
    return stored


def _operators(stored: StoredAutomation) -> None:
    if stored.automation.origin == "repository":
        raise HTTPException(status.HTTP_409_CONFLICT,
                            f"`{stored.automation.name}` is defined in its repository's `.isolator.toml`: change it "
                            "there, on the default branch (pause, resume and run work here)")


async def _read(pool: asyncpg.Pool, definition: dict[str, Any]) -> tuple[Any, str]:
    read = read_automation(definition, "api")
    if isinstance(read, AutomationProblem):
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT, read.describe())
    codebase = await pool.fetchval("SELECT id FROM codebases WHERE name = $1", read.codebase_id) \
        if read.codebase_id else None
    if codebase is None:
        names = [row["name"] for row in await pool.fetch("SELECT name FROM codebases ORDER BY name LIMIT 20")]
        raise HTTPException(status.HTTP_422_UNPROCESSABLE_CONTENT,
                            f"`codebase` must name a registered codebase ({', '.join(names) or 'none yet'})")
    return dataclasses.replace(read, codebase_id=str(codebase)), str(codebase)
