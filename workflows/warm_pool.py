"""WarmPoolWorkflow: one per codebase, `warm-pool:{codebase id}`; keeps its warm worktrees made, set up
and at the fresh base (docs/warm.md).

A claim (and a claim that found the pool empty) signals `refill`; between signals the pool looks every
`refresh_seconds` whether the fetched base moved on. Each refill is one activity on the codebase's host,
retried elsewhere when its worker dies (a few attempts; then the worker's log says why, and the pool
tries again at its next look); the refill itself clears what a killed one left. A pool whose size is 0
ends its workflow (a deleted codebase's too: its refill removes its warm worktrees); the next claim
starts it again.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from isolator.contracts.warm import RefillReport, WarmPoolInput
    from workflows.steps.warm import pool as warm_pool

# Refills per run before continue-as-new: keeps the history small.
REFILLS_PER_RUN = 100


@workflow.defn
class WarmPoolWorkflow:
    @workflow.init
    def __init__(self, request: WarmPoolInput) -> None:
        self._asked = False

    @workflow.run
    async def run(self, request: WarmPoolInput) -> None:
        for _ in range(REFILLS_PER_RUN):
            self._asked = False
            report = await self._refill(request)
            if report is not None and report.size == 0 and not self._asked:
                return
            try:
                await workflow.wait_condition(lambda: self._asked, timeout=timedelta(seconds=request.refresh_seconds))
            except TimeoutError:
                pass
        await workflow.wait_condition(workflow.all_handlers_finished)
        workflow.continue_as_new(request)

    async def _refill(self, request: WarmPoolInput) -> RefillReport | None:
        """None when the refill failed all its attempts: said in the worker's log, tried again at the next look."""
        try:
            return await warm_pool.refill(request)
        except ActivityError as error:
            workflow.logger.warning(
                "warm pool of %s: the refill failed %d times (%s); tried again in %d s",
                request.codebase.name, warm_pool.REFILL_RETRY_POLICY.maximum_attempts, error.cause or error,
                request.refresh_seconds)
            return None

    @workflow.signal
    def refill(self) -> None:
        self._asked = True
