"""Whether the processes that run messages agree on the settings that change what a message does
(isolator/fingerprint.py): a worker or an eager API that differs is named, with the settings it differs in."""

from __future__ import annotations

import asyncio

import asyncpg

from activities.database import create_pool
from activities.doctor.check import TIMEOUT_SECONDS, Check, redacted
from activities.hosts.liveness import ProcessView, deployment_view
from isolator.settings import Settings

NAME = "One behaviour: AGENT*, SANDBOX*, approvals, RESULTS* and AUTOFIX* alike in every process"


async def fingerprint_checks(settings: Settings) -> list[Check]:
    if not settings.database_url:
        return []
    try:
        pool = await asyncio.wait_for(create_pool(settings.database_url, max_size=1), TIMEOUT_SECONDS)
    except (OSError, asyncio.TimeoutError, asyncpg.PostgresError) as error:
        return [Check.failed(NAME, f"PostgreSQL did not answer ({type(error).__name__}: "
                                   f"{redacted(str(error), settings)})", "see the PostgreSQL check")]
    try:
        view = await deployment_view(pool)
    except asyncpg.UndefinedTableError:
        return [Check.passed(NAME, "no process has recorded itself yet (the database is not migrated)")]
    finally:
        await pool.close()
    running = [worker for host in view.hosts for worker in host.workers if worker.alive]
    running += [api for api in view.apis if api.alive]
    if not running:
        return [Check.passed(NAME, "no worker or API is running")]
    differing = [process for process in view.differing if process.runs_messages]
    if differing:
        return [Check.failed(NAME, "; ".join(_named(process) for process in differing),
                             "give every worker, and every API with EAGER_START, the same settings (the same "
                             "environment file), then restart the process named")]
    quiet = [process for process in view.differing if not process.runs_messages]
    detail = f"{len(running) - len(quiet)} processes agree"
    if quiet:
        detail += "; " + "; ".join(f"{_named(process)}, but it starts no message workflow" for process in quiet)
    return [Check.passed(NAME, detail)]


def _named(process: ProcessView) -> str:
    return (f"the {process.kind} of {process.host} ({process.machine}, pid {process.pid}) differs in "
            f"{', '.join(process.differs_in or [])}")
