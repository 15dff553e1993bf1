"""`GET /api/hosts`: the deployment's worker hosts (alive or silent since when, their workers, codebases, agent
runs and free disk), its API processes, and every process whose behaviour settings differ from the others'
(activities/hosts/liveness.py). Not `api/hosts.py`, which checks the `Host` header of requests."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import asyncpg
from fastapi import APIRouter, Depends
from pydantic import BaseModel

from activities.hosts.liveness import DeploymentView, HostView, ProcessView, deployment_view
from api.deps import get_pool, require_api_token

router = APIRouter(prefix="/api/hosts", tags=["hosts"], dependencies=[Depends(require_api_token)])


class ProcessOut(BaseModel):
    kind: str  # worker or api
    host: str  # its ISOLATOR_HOST
    machine: str  # the machine's own name
    pid: int
    alive: bool
    started_at: datetime
    last_seen: datetime
    stopped_at: datetime | None  # set at a clean stop
    fingerprint: str  # a hash of its AGENT*, SANDBOX*, approvals, results and autofix settings
    agent: str | None  # the agent it would run; null: none
    runs_messages: bool  # a worker, or an API that starts message workflows eagerly
    differs_in: list[str] | None  # the settings in which it differs from the deployment; null: it agrees


class HostOut(BaseModel):
    name: str
    alive: bool  # one of its workers recorded itself within the last 5 s
    last_seen: datetime | None  # null: no worker of it ever started
    workers: list[ProcessOut]  # its live workers (or its last one, when none is alive)
    codebases: int
    runs_running: int
    runs_queued: int
    disk_free_bytes: int | None  # of the file system of its WORKTREE_BASE
    disk_total_bytes: int | None


class HostsOut(BaseModel):
    hosts: list[HostOut]
    apis: list[ProcessOut]
    fingerprint: str | None  # the one most processes that run messages share
    differing: list[ProcessOut]  # live processes whose fingerprint is another


def process_out(process: ProcessView) -> ProcessOut:
    return ProcessOut(**{name: getattr(process, name) for name in ProcessOut.model_fields})


def host_out(host: HostView) -> HostOut:
    return HostOut(**{name: getattr(host, name) for name in HostOut.model_fields if name != "workers"},
                   workers=[process_out(worker) for worker in host.workers])


def hosts_out(view: DeploymentView) -> HostsOut:
    return HostsOut(hosts=[host_out(host) for host in view.hosts], apis=[process_out(api) for api in view.apis],
                    fingerprint=view.fingerprint, differing=[process_out(process) for process in view.differing])


@router.get("", response_model=HostsOut)
async def list_hosts(pool: Annotated[asyncpg.Pool, Depends(get_pool)]) -> HostsOut:
    return hosts_out(await deployment_view(pool))
