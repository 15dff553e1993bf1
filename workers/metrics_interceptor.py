"""The worker's in-process metrics (isolator/metrics.py), read off what workflows and activities return:
a message's outcome and how long its decision took, a warm pool's misses and refill problems, the
pull-request loop's fix runs, a cleanup's report. Nothing in the workflows or activities counts.

A workflow is counted when it ends for real, never while it is replayed (a worker that picks up a
workflow from its history runs its code again, to the same end)."""

from __future__ import annotations

import time
from typing import Any

from temporalio import activity, workflow
from temporalio.worker import (
    ActivityInboundInterceptor,
    ExecuteActivityInput,
    ExecuteWorkflowInput,
    Interceptor,
    WorkflowInboundInterceptor,
    WorkflowInterceptorClassInput,
)

from isolator import metrics
from isolator.contracts.cleanup import CleanupReport
from isolator.contracts.message import MessageInput, Resolution
from isolator.contracts.pr_loop import CiRecord
from isolator.contracts.warm import RefillReport, WarmClaim, WarmPoolInput
from isolator.contracts.worktree import WorktreeRequest


class Metrics(Interceptor):
    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _CountingActivities(next)

    def workflow_interceptor_class(self, input: WorkflowInterceptorClassInput) -> type[WorkflowInboundInterceptor]:
        return _CountingWorkflows


class _CountingWorkflows(WorkflowInboundInterceptor):
    async def execute_workflow(self, input: ExecuteWorkflowInput) -> Any:
        result = await self.next.execute_workflow(input)
        if not workflow.unsafe.is_replaying():
            with workflow.unsafe.sandbox_unrestricted():
                _workflow_ended(workflow.info(), input.args, result)
        return result


def _workflow_ended(info: workflow.Info, args: Any, result: Any) -> None:
    if info.workflow_type == "MessageWorkflow" and isinstance(result, Resolution) and args \
            and isinstance(args[0], MessageInput):
        metrics.MESSAGES.labels(args[0].platform, result.outcome).inc()
        # From its start (the webhook's request) to now: the wait for a worker included.
        metrics.DECISION_SECONDS.labels(result.outcome).observe(max(0.0, time.time() - info.start_time.timestamp()))
    elif info.workflow_type == "CodebaseCleanupWorkflow" and isinstance(result, CleanupReport):
        _count_cleanup(result)
    elif info.workflow_type == "CleanupWorkflow":
        metrics.CLEANUP_RUNS.inc()


def _count_cleanup(report: CleanupReport) -> None:
    for removed in report.removed:
        metrics.CLEANUP_WORKTREES.labels("removed", removal_why(removed)).inc()
    for skipped in report.skipped:
        metrics.CLEANUP_WORKTREES.labels("kept", kept_why(skipped.reason)).inc()
    for action, items, why in (("marked_gone", report.missing, "path_gone"), ("orphan_found", report.orphans, "no_row"),
                               ("archive_pruned", report.pruned, "retention"),
                               ("hibernated", report.hibernated, "disk_budget")):
        if items:
            metrics.CLEANUP_WORKTREES.labels(action, why).inc(len(items))


def removal_why(removed: str) -> str:
    """"branch (merged)", "branch (45 days inactive)", "branch (45 days inactive, hibernated)"."""
    why = removed.rpartition(" (")[2]
    return "merged" if why.startswith("merged") else "stale"


def kept_why(reason: str) -> str:
    if reason.startswith("still used by"):
        return "in_use"
    if "unpushed" in reason:
        return "unpushed_commits"
    return "refused"  # the environment's workflow refused the removal (dirty, a step running)


class _CountingActivities(ActivityInboundInterceptor):
    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        result = await self.next.execute_activity(input)
        _activity_ended(activity.info().activity_type, input.args, result)
        return result


def _activity_ended(name: str, args: Any, result: Any) -> None:
    argument = args[0] if args else None
    if name in ("claim_warm_worktree", "claim_warm_worktree_here") and isinstance(result, WarmClaim) \
            and isinstance(argument, WorktreeRequest) and (why := miss_why(result)) is not None:
        metrics.WARM_MISSES.labels(argument.codebase.name, why).inc()
    elif name == "refill_warm_pool" and isinstance(result, RefillReport) and result.problems \
            and isinstance(argument, WarmPoolInput):
        metrics.WARM_REFILL_FAILURES.labels(argument.codebase.name).inc(len(result.problems))
    elif name == "count_fix_attempt":
        metrics.PR_FIX_RUNS.inc()
    elif name == "stop_fixing" and result is True:
        metrics.PR_FIX_STOPS.inc()
    elif name == "record_ci" and isinstance(argument, CiRecord) and argument.state == "green" \
            and isinstance(result, int) and result > 0:
        metrics.PR_GREEN_AFTER_FIXES.inc()


def miss_why(claim: WarmClaim) -> str | None:
    """Why a create found no warm worktree; None when it was no miss (claimed, asked on another host, the
    pool off, or work no warm worktree is for)."""
    if claim.outcome != "none" or claim.reason in ("the pool is off", "not a new branch from the default base"):
        return None
    if claim.reason.startswith("the pool is empty"):
        return "empty"
    if "being made" in claim.reason:
        return "being_made"
    if claim.reason.startswith("its warm set-up failed"):
        return "setup_failed"
    return "other"
