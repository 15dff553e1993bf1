"""AgentRunWorkflow: the record of one run of the coding agent in the Temporal UI, a child of its
environment's workflow. It is found by codebase, branch, platform and conversation while the run
goes, and by its outcome once it has ended; its result is the run's report.

The run itself is an activity of the environment's workflow (workflows/environment_runs.py): its
queue and its worktree live there, and a child between them would cost every run's start a
workflow task. This workflow starts beside the run and is told its end.
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from isolator.contracts import search_attributes
    from isolator.contracts.agent import AgentRunReport
    from isolator.contracts.environment import AgentRunInput


def agent_run_workflow_id(run_id: str) -> str:
    return f"agent-run:{run_id}"


@workflow.defn
class AgentRunWorkflow:
    def __init__(self) -> None:
        self._report: AgentRunReport | None = None

    @workflow.run
    async def run(self, request: AgentRunInput) -> AgentRunReport:
        workflow.set_current_details(f"Running in `{request.environment.branch}`: {request.run.text[:200]}")
        await workflow.wait_condition(lambda: self._report is not None)
        assert self._report is not None
        workflow.upsert_search_attributes([search_attributes.OUTCOME.value_set(self._report.status)])
        workflow.set_current_details(f"Run {self._report.status} in `{request.environment.branch}`")
        return self._report

    @workflow.signal
    def finished(self, report: AgentRunReport) -> None:
        self._report = report
