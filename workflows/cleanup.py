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
        plan_cleanup,
        tracked_worktrees,
    )
    from isolator.contracts.cleanup import (
        Breakdown,
        CleanupReport,
        CleanupRunReport,
        CodebaseCleanupInput,
        EnvironmentListing,
        Skipped,
    )
    from isolator.contracts.codebase import Codebase
    from isolator.contracts.environment import DestroyEnvironmentInput, DestroyRequest
    from isolator.contracts.worktree import RemovalReport, SurveyInput, WorktreeSurvey
    from workflows.steps import codebases, environment_signals, environments, isolation


async def survey_environments(codebase: Codebase, listing: EnvironmentListing,
                              measure_disk: bool = False) -> WorktreeSurvey:
    """One survey per codebase: three git processes whatever the count, then a few per candidate
    (activities/survey.py says which). With `measure_disk` (`/status`), each worktree's size within
    a budget; without (a cleanup, a dry run), GitHub is asked about PRs git finds unmerged."""
    return await isolation.survey_worktrees(SurveyInput(codebase, tracked_worktrees(listing),
                                                        measure_disk=measure_disk, ask_github=not measure_disk))


@dataclass
class CodebaseView:
    """A codebase's environments as the database and git see them, and their counts."""

    listing: EnvironmentListing
    survey: WorktreeSurvey
    counts: Breakdown


async def view_codebase(codebase: Codebase, measure_disk: bool = False) -> CodebaseView:
    listing = await environments.list_environments(codebase.id)
    survey = await survey_environments(codebase, listing, measure_disk)
    return CodebaseView(listing, survey, breakdown(listing.environments, survey, listing.limit,
                                                   listing.stale_threshold_days))


@workflow.defn
class CodebaseCleanupWorkflow:
    @workflow.run
    async def run(self, request: CodebaseCleanupInput) -> CleanupReport:
        codebase = request.codebase
        listing = await environments.list_environments(codebase.id)
        survey = await survey_environments(codebase, listing)
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
        return report

    async def _destroy(self, candidate: Candidate, run_key: str) -> RemovalReport:
        request = DestroyRequest(force=False, reason=candidate.why, proof=candidate.proof,
                                 key=f"{run_key}:{candidate.environment.environment_id}")
        return await environment_signals.destroy_environment(DestroyEnvironmentInput(candidate.environment, request))


@workflow.defn
class CleanupWorkflow:
    """Started by the `isolation-cleanup` schedule: every codebase, every rule."""

    @workflow.run
    async def run(self) -> CleanupRunReport:
        run_id = workflow.info().workflow_id
        reports = []
        for codebase in await codebases.list_codebases():
            reports.append(await workflow.execute_child_workflow(
                CodebaseCleanupWorkflow.run,
                CodebaseCleanupInput(codebase, ["missing", "merged", "stale"], key=run_id),
                id=f"{run_id}:{codebase.name}",
            ))
        return CleanupRunReport(codebases=reports)
