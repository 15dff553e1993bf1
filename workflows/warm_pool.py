"""WarmPoolWorkflow: one per codebase, `warm-pool:{codebase id}`; keeps its warm worktrees made, set up
and at the fresh base (docs/warm.md).

A claim (and a claim that found the pool empty) signals `refill`; between signals the pool looks every
`refresh_seconds` whether the fetched base moved on. Each refill is one activity on the codebase's host,
retried elsewhere when its worker dies; the refill itself clears what a killed one left. A pool whose
size is 0 ends its workflow; the next claim starts it again.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from isolator.contracts.warm import WarmPoolInput
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
            report = await warm_pool.refill(request)
            if report.size == 0 and not self._asked:
                return
            try:
                await workflow.wait_condition(lambda: self._asked, timeout=timedelta(seconds=request.refresh_seconds))
            except TimeoutError:
                pass
        await workflow.wait_condition(workflow.all_handlers_finished)
        workflow.continue_as_new(request)

    @workflow.signal
    def refill(self) -> None:
        self._asked = True
