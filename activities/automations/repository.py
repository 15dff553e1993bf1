"""A repository's own automations: read from its committed default branch at origin, on its host, and
made, changed or removed to match it (docs/automations.md). Only a push to the default branch counts:
whoever can push there decides what runs."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import asyncpg
from temporalio import activity
from temporalio.client import Client

from activities.automations import schedules
from activities.automations.records import AutomationRecords
from activities.providers.worktree.base import committed_config, fresh_base
from isolator.automation_places import allowed_place
from isolator.contracts.automation import (
    AutomationProblem,
    CommittedAutomations,
    Reconciled,
    ReconcileInput,
    automation_from_json,
)
from isolator.contracts.codebase import Codebase
from isolator.repository_config import read_repository_automations
from isolator.settings import Settings


class RepositoryAutomationActivities:
    def __init__(self, settings: Settings, pool: asyncpg.Pool | None = None, client: Client | None = None) -> None:
        self.settings = settings
        self.pool = pool
        self.client = client

    @activity.defn
    async def read_committed_automations(self, codebase: Codebase) -> CommittedAutomations:
        """On the codebase's host: origin's default branch fetched now, its `.isolator.toml` read."""
        repository = Path(codebase.canonical_path)
        base = await fresh_base(self.settings.worktree_base, repository, codebase.default_branch, 0)
        read = read_repository_automations(await committed_config(repository, base))
        if isinstance(read, AutomationProblem):
            return CommittedAutomations(problem=read.describe(), revision=base.revision)
        return CommittedAutomations([dataclasses.asdict(automation) for automation in read], revision=base.revision)

    @activity.defn
    async def reconcile_automations(self, request: ReconcileInput) -> Reconciled:
        assert self.pool is not None and self.client is not None
        records, done = AutomationRecords(self.pool), Reconciled()
        if request.committed.problem:
            activity.logger.info("automations of codebase %s left as they were: %s", request.codebase_id,
                                 request.committed.problem)
            return done
        used = {row["platform"] for row in await self.pool.fetch(
            "SELECT DISTINCT platform FROM conversations WHERE codebase_id = $1::uuid", request.codebase_id)}
        allowed = [entry.strip() for entry in self.settings.automation_report_places.split(",") if entry.strip()] \
            if self.settings.automation_report_places else None
        wanted = {}
        for definition in request.committed.definitions:
            automation = automation_from_json(definition)
            existing = await records.get(automation.name)
            if existing is not None and (existing.codebase_id != request.codebase_id or existing.automation.origin != "repository"):
                done.refused.append(f"{automation.name}: the name is taken by another automation")
            elif not allowed_place(automation.report, allowed, used):
                done.refused.append(f"{automation.name}: the operator does not allow reports to "
                                    f"{automation.report.spelled()} (AUTOMATION_REPORT_PLACES)")
            else:
                wanted[automation.name] = (automation, existing)
        for name, (automation, existing) in wanted.items():
            if await records.save(automation, request.codebase_id):
                (done.changed if existing is not None else done.made).append(name)
                await schedules.sync_schedule(self.client, automation, self.settings.task_queue,
                                              paused=existing.paused if existing is not None else False)
        for stale in await records.all(request.codebase_id, origin="repository"):
            if stale.automation.name not in wanted:
                await schedules.remove_schedule(self.client, stale.automation.name)
                await records.delete(stale.automation.name)
                done.removed.append(stale.automation.name)
        activity.logger.info("automations of codebase %s at %s: made %s, changed %s, removed %s, refused %s",
                             request.codebase_id, request.committed.revision[:12], done.made, done.changed,
                             done.removed, done.refused)
        return done
