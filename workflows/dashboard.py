"""The dashboard's questions that need git, answered by the same survey and rules as chat's:
`/worktree why` for one environment, and `/worktree cleanup --dry-run` for every codebase.
Short read-only workflows: nothing is changed, and the API stays free of git."""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from isolator.cleanup_rules import cleanup_verdict, is_fresh, plan_cleanup
    from isolator.contracts.codebase import Codebase
    from isolator.contracts.dashboard import CleanupPreview, ExplainEnvironmentInput, PlannedRemoval
    from isolator.contracts.worktree import ExplainRequest
    from workflows.chat import worktree_texts
    from workflows.cleanup import view_codebase
    from workflows.steps.environments import worktree_facts

EVERY_RULE = ["missing", "merged", "stale"]


@workflow.defn
class ExplainEnvironmentWorkflow:
    """What `/worktree why <name>` says about an active environment; None when it is not active."""

    @workflow.run
    async def run(self, request: ExplainEnvironmentInput) -> str | None:
        view = await view_codebase(request.codebase, plans_cleanup=True)
        tracked = next((e for e in view.listing.environments if e.ref.environment_id == request.environment_id), None)
        if tracked is None:
            return None
        facts = await worktree_facts.explain_worktree(ExplainRequest(request.codebase, tracked.ref.working_path,
                                                                     tracked.ref.branch))
        threshold = view.listing.stale_threshold_days
        plan = plan_cleanup(view.listing.environments, view.survey, EVERY_RULE, threshold)  # type: ignore[arg-type]
        state = next((s for s in view.survey.states if s.environment_id == request.environment_id), None)
        fresh = state is not None and is_fresh(tracked.start_commit, state.tip)  # as chat's `/worktree why` says
        return worktree_texts.why(tracked, facts, cleanup_verdict(tracked.ref, plan, fresh), threshold, fresh)


@workflow.defn
class CleanupPreviewWorkflow:
    """The dry run of the next scheduled cleanup's removals, codebase by codebase, with each reason."""

    @workflow.run
    async def run(self, codebases: list[Codebase]) -> list[CleanupPreview]:
        previews = []
        for codebase in codebases:
            view = await view_codebase(codebase, plans_cleanup=True)
            plan = plan_cleanup(view.listing.environments, view.survey, EVERY_RULE,  # type: ignore[arg-type]
                                view.listing.stale_threshold_days)
            previews.append(CleanupPreview(
                codebase.name,
                [PlannedRemoval(c.environment.environment_id, c.environment.branch, c.reason()) for c in plan.remove],
                list(plan.skipped),
            ))
        return previews
