"""Cleanup: removing what is merged, stale or gone, always through the environment workflows.

CodebaseCleanupWorkflow sweeps one codebase; `/worktree cleanup`, the limit's auto-cleanup and the
scheduled CleanupWorkflow all run it, so every path applies the same rules.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from isolator.cleanup_rules import (
        Candidate,
        breakdown,
        hibernation_order,
        is_merged,
        plan_cleanup,
        stale_hibernated,
        tracked_worktrees,
    )
    from isolator.contracts.archive import DiskUse, PrunedArchives
    from isolator.contracts.cleanup import (
        CleanupKind,
        Breakdown,
        CleanupReport,
        CleanupRunReport,
        CodebaseCleanupInput,
        EnvironmentListing,
        Skipped,
    )
    from isolator.contracts.codebase import Codebase
    from isolator.contracts.environment import HIBERNATE, DestroyEnvironmentInput, DestroyRequest
    from isolator.contracts.worktree import (
        SCHEDULED_DISK_SECONDS,
        PruneArchivesInput,
        RemovalReport,
        SurveyInput,
        WorktreeSurvey,
    )
    from isolator.contracts.warm import WarmBudgetInput
    from workflows.chat.worktree_texts import human_size
    from workflows.cleanup_hosts import sweep_hosts
    from workflows.steps import versions
    from workflows.steps.codebases import registration as codebases
    from workflows.steps.environments import (
        archives,
        signals as environment_signals,
        records as environments,
        isolation,
    )
    from workflows.steps.warm import pool as warm_pool


async def survey_environments(codebase: Codebase, listing: EnvironmentListing, measure_disk: bool = False,
                              disk_seconds: float | None = None, plans_cleanup: bool = False) -> WorktreeSurvey:
    """One survey per codebase: a few git processes whatever the count, then one per stale candidate
    when a cleanup is planned (activities/providers/worktree/survey.py says which). With `measure_disk`, each worktree's
    size within a time budget (`/status`'s own, or `disk_seconds`); a planned cleanup asks GitHub
    about PRs git finds unmerged."""
    return await isolation.survey_worktrees(SurveyInput(
        codebase, tracked_worktrees(listing), measure_disk=measure_disk, disk_seconds=disk_seconds,
        ask_github=plans_cleanup, plans_cleanup=plans_cleanup,
    ))


@dataclass
class CodebaseView:
    """A codebase's environments as the database and git see them, and their counts."""

    listing: EnvironmentListing
    survey: WorktreeSurvey
    counts: Breakdown


async def view_codebase(codebase: Codebase, measure_disk: bool = False, plans_cleanup: bool = False) -> CodebaseView:
    listing = await environments.list_environments(codebase.id)
    survey = await survey_environments(codebase, listing, measure_disk, plans_cleanup=plans_cleanup)
    return CodebaseView(listing, survey, breakdown(listing.environments, survey, listing.limit,
                                                   listing.stale_threshold_days))


@workflow.defn
class CodebaseCleanupWorkflow:
    @workflow.run
    async def run(self, request: CodebaseCleanupInput) -> CleanupReport:
        codebase = request.codebase
        listing = await environments.list_environments(codebase.id)
        budget = "budget" in request.kinds  # the scheduled cleanup measures every worktree as it surveys
        survey = await survey_environments(codebase, listing, measure_disk=budget,
                                           disk_seconds=SCHEDULED_DISK_SECONDS if budget else None, plans_cleanup=True)
        plan = plan_cleanup(listing.environments, survey, request.kinds, listing.stale_threshold_days)
        report = CleanupReport(codebase=codebase.name, skipped=list(plan.skipped), orphans=list(survey.orphans))
        outcomes = await asyncio.gather(*(self._destroy(candidate, request.key) for candidate in plan.remove))
        for candidate, outcome in zip(plan.remove, outcomes):
            if outcome.outcome == "refused":
                report.skipped.append(Skipped(candidate.environment.branch, outcome.message))
            elif candidate.why == "path gone":
                report.missing.append(candidate.environment.working_path)
            else:
                report.removed.append(f"{candidate.environment.branch} ({candidate.why})")
        if "archives" in request.kinds and "stale" in request.kinds and versions.removes_stale_hibernated():
            report.removed += await self._remove_stale_hibernated(codebase, request.key)
        if "archives" in request.kinds:
            report.pruned = await self._prune_archives(codebase)
        if budget:
            removed = {candidate.environment.environment_id for candidate, outcome in zip(plan.remove, outcomes)
                       if outcome.outcome != "refused"}
            report.hibernated = await self._keep_within_budget(codebase, listing, survey, removed, request.key)
        return report

    async def _remove_stale_hibernated(self, codebase: Codebase, run_key: str) -> list[str]:
        listing = await environments.list_hibernated_environments(codebase.id)
        removed = []
        for candidate in stale_hibernated(listing.environments, listing.stale_threshold_days):
            if (await self._destroy(candidate, run_key)).outcome != "refused":
                removed.append(f"{candidate.environment.branch} ({candidate.why}, hibernated)")
        return removed

    async def _prune_archives(self, codebase: Codebase) -> list[str]:
        """Archives past ARCHIVE_RETENTION_DAYS go, and with them the branches nothing else needs."""
        expired = await archives.find_expired_archives(codebase)
        if not expired.archives:
            return []
        pruned = await isolation.prune_archives(PruneArchivesInput(codebase, expired.archives))
        await archives.mark_archives_pruned(PrunedArchives(codebase.id, pruned))
        return [f"{archive.branch} (branch {archive.branch_outcome})" for archive in pruned]

    async def _keep_within_budget(self, codebase: Codebase, listing: EnvironmentListing, survey: WorktreeSurvey,
                                  removed: set[str], run_key: str) -> list[str]:
        """Every remaining worktree's size kept with its row (for the API); over DISK_BUDGET_GB, warm
        worktrees go first, then the least recently active idle ones hibernate until the codebase is within it."""
        sizes = {state.environment_id: state.disk_bytes for state in survey.states
                 if state.disk_bytes is not None and state.environment_id not in removed}
        # Only what the rules call merged: a branch with no work of its own is in its base, yet not merged.
        tracked = {environment.ref.environment_id: environment for environment in listing.environments}
        proofs = {state.environment_id: state.merge_proof for state in survey.states
                  if state.merge_proof and state.environment_id in tracked
                  and is_merged(tracked[state.environment_id], state)}
        await archives.record_disk_use(DiskUse(sizes, proofs))
        total, budget = sum(sizes.values()), listing.disk_budget_bytes
        if budget is not None:
            total += await warm_pool.trim_for_budget(WarmBudgetInput(codebase, total, budget))
        hibernated: list[str] = []
        for environment in hibernation_order(listing.environments, sizes):
            if budget is None or total <= budget:
                break
            request = DestroyRequest(force=False, reason=HIBERNATE, key=f"{run_key}:{environment.ref.environment_id}")
            outcome = await environment_signals.destroy_environment(DestroyEnvironmentInput(environment.ref, request))
            if outcome.outcome != "refused":
                size = sizes[environment.ref.environment_id]
                total -= size
                hibernated.append(f"{environment.ref.branch} ({human_size(size)})")
        return hibernated

    async def _destroy(self, candidate: Candidate, run_key: str) -> RemovalReport:
        request = DestroyRequest(force=False, reason=candidate.why, proof=candidate.proof,
                                 key=f"{run_key}:{candidate.environment.environment_id}")
        return await environment_signals.destroy_environment(DestroyEnvironmentInput(candidate.environment, request))


SCHEDULED_KINDS: list[CleanupKind] = ["missing", "merged", "stale", "archives", "budget"]


@workflow.defn
class CleanupWorkflow:
    """Started by the `isolation-cleanup` schedule: every codebase, every rule, the archives' retention
    and the disk budget; what it removed, pruned and hibernated is its result, and logged."""

    @workflow.run
    async def run(self) -> CleanupRunReport:
        run_id = workflow.info().workflow_id
        if versions.sweeps_hosts_apart():  # each host's codebases in a workflow of their own, all at once
            swept = await sweep_hosts(await codebases.list_codebases(), SCHEDULED_KINDS, run_id)
            for report in swept.codebases:
                _log(report)
            return swept
        reports: list[CleanupReport] = []
        for codebase in await codebases.list_codebases():
            reports.append(await workflow.execute_child_workflow(
                CodebaseCleanupWorkflow.run,
                CodebaseCleanupInput(codebase, list(SCHEDULED_KINDS), key=run_id),
                id=f"{run_id}:{codebase.name}",
                static_summary=f"cleanup of {codebase.name}: missing, merged and stale worktrees, old archives, disk",
            ))
            _log(reports[-1])
        return CleanupRunReport(codebases=reports)


def _log(report: CleanupReport) -> None:
    if report.removed or report.pruned or report.hibernated:
        workflow.logger.info("cleanup of %s: removed %s; archives pruned %s; hibernated %s", report.codebase,
                             report.removed, report.pruned, report.hibernated)
