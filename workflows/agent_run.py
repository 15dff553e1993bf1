"""AgentRunWorkflow: one run of the coding agent, a child of its environment's workflow.

Its own workflow so that each run can be found in the Temporal UI by conversation, branch and
outcome. It runs the agent once: a run whose worker died is recorded as interrupted and its
conversation told, never started again. The `stop` signal (`/stop`, a forced removal) ends it.
"""

from __future__ import annotations

import asyncio

from temporalio import workflow
from temporalio.exceptions import ActivityError, ChildWorkflowError, TimeoutError as StepTimeout

with workflow.unsafe.imports_passed_through():
    from isolator.contracts import search_attributes
    from isolator.contracts.agent import AgentRunReport, InterruptedRun
    from isolator.contracts.environment import AgentRunInput
    from workflows.agent_workflow_run import run_team_workflow
    from workflows.steps import agent_runs


def agent_run_workflow_id(run_id: str) -> str:
    return f"agent-run:{run_id}"


@workflow.defn
class AgentRunWorkflow:
    def __init__(self) -> None:
        self._stop = False

    @workflow.run
    async def run(self, request: AgentRunInput) -> AgentRunReport:
        if request.run.plan.kind == "workflow":
            running = asyncio.create_task(run_team_workflow(request))
        else:
            running = asyncio.create_task(agent_runs.run_agent(request))
        await workflow.wait_condition(lambda: running.done() or self._stop)
        if not running.done():
            running.cancel()  # the activity stops the process group, then says "stopped"
        try:
            report = await running
        except (asyncio.CancelledError, ActivityError, ChildWorkflowError) as error:
            report = await self._ended_without_report(request, error)
        workflow.upsert_search_attributes([search_attributes.OUTCOME.value_set(report.status)])
        workflow.set_current_details(f"Run {report.status}")
        return report

    @workflow.signal
    def stop(self) -> None:
        self._stop = True

    async def _ended_without_report(self, request: AgentRunInput, error: BaseException) -> AgentRunReport:
        run_id = request.run.run_id
        cause = error.cause if isinstance(error, ActivityError) else error
        if isinstance(error, asyncio.CancelledError) or self._stop:
            return AgentRunReport(run_id, "stopped")  # recorded and said by the run itself
        reason = ("its worker stopped answering" if isinstance(cause, StepTimeout)
                  else f"it failed unexpectedly ({cause})")
        await agent_runs.record_interrupted_run(
            InterruptedRun(run_id, request.run.conversation, request.environment.branch, reason)
        )
        return AgentRunReport(run_id, "interrupted")
