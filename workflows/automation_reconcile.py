"""ReconcileAutomationsWorkflow: a codebase's `[[automations]]`, as committed on its default branch at
origin, made, changed and removed to match (docs/automations.md). Started by a push to the default
branch (`automations:reconcile:<codebase>:<the pushed commit>`, so a redelivered push reconciles once)."""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from isolator.contracts.automation import Reconciled, ReconcileInput
    from isolator.contracts.codebase import Codebase
    from workflows.steps.automations import repository


def reconcile_workflow_id(codebase_id: str, revision: str) -> str:
    return f"automations:reconcile:{codebase_id}:{revision}"


@workflow.defn
class ReconcileAutomationsWorkflow:
    @workflow.run
    async def run(self, codebase: Codebase) -> Reconciled:
        committed = await repository.read_committed_automations(codebase)
        return await repository.reconcile_automations(ReconcileInput(codebase.id, committed))
