"""Stubs of activities/warm/pool.py and activities/warm/refill.py: the codebase's warm worktrees."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

from temporalio import workflow

from isolator.contracts.codebase import Codebase
from isolator.contracts.warm import RefillReport, WarmBudgetInput, WarmClaim, WarmPoolInput, WarmPoolView
from isolator.contracts.worktree import WorktreeReady, WorktreeRequest
from workflows.steps.environments import isolation
from workflows.steps.options import HEARTBEAT_TIMEOUT, LOCAL_OPTIONS, RETRY_POLICY, host_queue

# From this version a create for a new branch from the default base first claims a warm worktree.
CLAIMS_WARM = "claims-warm-worktrees"
# From this version `/status` and `/worktree list` show the codebase's warm pool.
SHOWS_POOL = "status-shows-warm-pool"
# From this version the scheduled cleanup counts warm worktrees in the disk budget, and removes them first.
WARM_IN_BUDGET = "warm-worktrees-in-disk-budget"
# A refill can run a set-up: bounded by the longest `[setup] timeout_minutes`, with room for git.
REFILL_TIMEOUT = timedelta(hours=25)
# A refill that keeps failing is given up after these attempts: the pool says so in the worker's log and
# tries again at its next look, instead of retrying every 10 s for ever.
REFILL_RETRY_POLICY = dataclasses.replace(RETRY_POLICY, maximum_attempts=5)


async def claim_or_create(request: WorktreeRequest, locally: bool) -> WorktreeReady:
    """A warm worktree moved into place on the new branch; when there is none (or the pool is off, or
    the work is a PR's), the worktree is made as before."""
    if request.source == "default" and workflow.patched(CLAIMS_WARM):
        claim = await workflow.execute_local_activity(
            "claim_warm_worktree_here", request, result_type=WarmClaim,
            **{**LOCAL_OPTIONS, "start_to_close_timeout": timedelta(minutes=2)},
        )
        if claim.outcome == "elsewhere":
            claim = await workflow.execute_activity(
                "claim_warm_worktree", request, result_type=WarmClaim, task_queue=host_queue(request.codebase.host),
                start_to_close_timeout=timedelta(minutes=2), heartbeat_timeout=HEARTBEAT_TIMEOUT,
                retry_policy=RETRY_POLICY,
            )
        if claim.worktree is not None:
            return claim.worktree
    return await isolation.create_worktree(request, locally=locally)


async def refill(request: WarmPoolInput) -> RefillReport:
    return await workflow.execute_activity(
        "refill_warm_pool", request, result_type=RefillReport, task_queue=host_queue(request.codebase.host),
        start_to_close_timeout=REFILL_TIMEOUT, heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=REFILL_RETRY_POLICY,
    )


async def view(codebase: Codebase) -> WarmPoolView:
    return await workflow.execute_local_activity("view_warm_pool", codebase, result_type=WarmPoolView,
                                                 **LOCAL_OPTIONS)


async def pool_lines(codebase: Codebase) -> str:
    """`/status`'s and `/worktree list`'s lines about the pool ("" when it is off)."""
    if not workflow.patched(SHOWS_POOL):
        return ""
    return (await view(codebase)).describe()


async def trim_for_budget(request: WarmBudgetInput) -> int:
    """The bytes of the warm worktrees left once those over the budget are gone (0 in older runs)."""
    if not workflow.patched(WARM_IN_BUDGET):
        return 0
    return await workflow.execute_activity(
        "trim_warm_pool", request, result_type=int, task_queue=host_queue(request.codebase.host),
        start_to_close_timeout=timedelta(minutes=10), heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=RETRY_POLICY,
    )
