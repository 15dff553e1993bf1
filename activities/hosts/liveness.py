"""What the processes' rows say: whether a host is alive (`/readyz`, the dashboard's pages), and the
deployment's view (hosts, their workers, codebases, runs and disk; the APIs; the processes whose settings
differ) for `GET /api/hosts`, the dashboard's hosts page and `isolator doctor`."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

import asyncpg

from activities.hosts.presence import SILENT_AFTER_SECONDS
from isolator.contracts.hosts import HostLiveness
from isolator.fingerprint import differing_settings

_PROCESSES = """
    SELECT *, stopped_at IS NULL AND last_seen > now() - make_interval(secs => $1) AS alive
    FROM service_processes ORDER BY host, kind, started_at"""


@dataclass
class ProcessView:
    kind: str  # worker or api
    host: str
    machine: str
    pid: int
    started_at: datetime
    last_seen: datetime
    stopped_at: datetime | None
    alive: bool
    fingerprint: str
    agent: str | None
    runs_messages: bool  # a worker, or an API that starts message workflows eagerly
    settings_hashes: dict[str, str]  # each behaviour setting's hash (isolator/fingerprint.py)
    disk_free_bytes: int | None
    disk_total_bytes: int | None
    differs_in: list[str] | None = None  # the settings in which it differs from the deployment; None: it agrees


@dataclass
class HostView:
    name: str
    alive: bool
    last_seen: datetime | None
    workers: list[ProcessView]
    codebases: int = 0
    runs_running: int = 0
    runs_queued: int = 0
    disk_free_bytes: int | None = None
    disk_total_bytes: int | None = None


@dataclass
class DeploymentView:
    hosts: list[HostView]
    apis: list[ProcessView]
    fingerprint: str | None  # the one most processes that run messages share; None: no such process is alive
    differing: list[ProcessView] = field(default_factory=list)


def seen_text(moment: datetime | None) -> str | None:
    return moment.strftime("%H:%M:%S UTC") if moment else None


async def liveness_of(pool: asyncpg.Pool, host: str) -> HostLiveness:
    row = await pool.fetchrow(
        """SELECT count(*) FILTER (WHERE stopped_at IS NULL AND last_seen > now() - make_interval(secs => $2))
                  AS live, max(last_seen) AS last_seen
           FROM service_processes WHERE host = $1 AND kind = 'worker'""", host, SILENT_AFTER_SECONDS)
    last: datetime | None = row["last_seen"]
    return HostLiveness(host, row["live"] > 0, row["live"], last.timestamp() if last else None, seen_text(last))


async def all_liveness(pool: asyncpg.Pool) -> list[HostLiveness]:
    """Every host that has a worker row or a codebase, by name."""
    rows = await pool.fetch(
        """SELECT h.host, count(p.id) FILTER (WHERE p.stopped_at IS NULL
                                                 AND p.last_seen > now() - make_interval(secs => $1)) AS live,
                  max(p.last_seen) AS last_seen
           FROM (SELECT host FROM service_processes WHERE kind = 'worker' UNION SELECT host FROM codebases) h
           LEFT JOIN service_processes p ON p.host = h.host AND p.kind = 'worker'
           GROUP BY h.host ORDER BY h.host""", SILENT_AFTER_SECONDS)
    return [HostLiveness(row["host"], row["live"] > 0, row["live"],
                         row["last_seen"].timestamp() if row["last_seen"] else None, seen_text(row["last_seen"]))
            for row in rows]


async def deployment_view(pool: asyncpg.Pool) -> DeploymentView:
    processes = [_process(row) for row in await pool.fetch(_PROCESSES, SILENT_AFTER_SECONDS)]
    expected = _compare(processes)
    codebases = {row["host"]: row["count"] for row in await pool.fetch(
        "SELECT host, count(*) FROM codebases GROUP BY host")}
    runs = {row["host"]: row for row in await pool.fetch(
        """SELECT c.host, count(*) FILTER (WHERE r.status = 'running') AS running,
                  count(*) FILTER (WHERE r.status = 'queued') AS queued
           FROM agent_runs r JOIN isolation_environments e ON e.id = r.environment_id
           JOIN codebases c ON c.id = e.codebase_id WHERE r.status IN ('running', 'queued') GROUP BY c.host""")}
    names = sorted({process.host for process in processes if process.kind == "worker"} | set(codebases))
    hosts = [_host(name, processes, codebases.get(name, 0), runs.get(name)) for name in names]
    apis = [process for process in processes if process.kind == "api" and (process.alive or not process.stopped_at)]
    differing = [process for process in processes if process.differs_in is not None]
    return DeploymentView(hosts, apis, expected, differing)


def _host(name: str, processes: list[ProcessView], codebases: int, runs: asyncpg.Record | None) -> HostView:
    workers = [process for process in processes if process.kind == "worker" and process.host == name]
    live = [worker for worker in workers if worker.alive]
    latest = max(workers, key=lambda worker: worker.last_seen, default=None)
    return HostView(name, bool(live), latest.last_seen if latest else None, live or workers[-1:], codebases,
                    runs["running"] if runs else 0, runs["queued"] if runs else 0,
                    latest.disk_free_bytes if latest else None, latest.disk_total_bytes if latest else None)


def _process(row: asyncpg.Record) -> ProcessView:
    return ProcessView(row["kind"], row["host"], row["machine"], row["pid"], row["started_at"], row["last_seen"],
                       row["stopped_at"], row["alive"], row["fingerprint"], row["agent"], row["runs_messages"],
                       row["settings_hashes"], row["disk_free_bytes"], row["disk_total_bytes"])


def _compare(processes: list[ProcessView]) -> str | None:
    """The deployment's fingerprint (the most common among the live processes that run messages); every live
    process with another is given the settings it differs in."""
    counts = Counter(process.fingerprint for process in processes if process.alive and process.runs_messages)
    if not counts:
        return None
    ranked = counts.most_common()
    tied = len(ranked) > 1 and ranked[0][1] == ranked[1][1]
    expected = None if tied else ranked[0][0]
    parts = {process.fingerprint: process.settings_hashes for process in processes}
    for process in processes:
        if not process.alive or process.fingerprint == expected:
            continue
        other = expected or next(digest for digest, _ in ranked if digest != process.fingerprint)
        process.differs_in = differing_settings(process.settings_hashes, parts[other])
    return expected
