"""A run through a team's own agent workflow (AGENT_WORKFLOW on AGENT_TASK_QUEUE, in any SDK): it
is started as a child with a JSON input, and its result (a string, or an object with `text`) is the
answer. The run's record and its messages are kept as for an agent program."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ChildWorkflowError, TimeoutError as StepTimeout

with workflow.unsafe.imports_passed_through():
    from isolator.contracts.agent import AgentRunReport, RunStatus, TeamRunEnd
    from isolator.contracts.environment import AgentRunInput
    from workflows.steps.runs import queue as agent_runs


async def run_team_workflow(request: AgentRunInput) -> AgentRunReport:
    run, environment = request.run, request.environment
    start = await agent_runs.begin_team_run(request)
    began = workflow.now()
    platform, conversation = run.conversation.split(":", 1)
    status: RunStatus
    try:
        result = await workflow.execute_child_workflow(
            run.plan.workflow or "", {
                "message": run.text, "working_path": environment.working_path, "branch": environment.branch,
                "platform": platform, "conversation": conversation,
                "environment_id": environment.environment_id, "run_id": run.run_id,
            },
            id=f"agent-run:{run.run_id}:agent", task_queue=run.plan.task_queue,
            static_summary=f"the team's agent in `{environment.branch}`: {run.text[:80]}",
            execution_timeout=timedelta(minutes=run.plan.timeout_minutes),
            retry_policy=RetryPolicy(maximum_attempts=1), result_type=Any,
        )
        status, answer = "done", _answer_of(result)
    except ChildWorkflowError as error:
        timed_out = isinstance(error.cause, StepTimeout)
        status = "timed_out" if timed_out else "failed"
        answer = "" if timed_out else f"`{run.plan.workflow}` failed: {error.cause or error}"
    except asyncio.CancelledError:
        status, answer = "stopped", ""
    end = TeamRunEnd(status, answer, (workflow.now() - began).total_seconds(), start)
    # A stopped run gets its record and its last message too (the stop cancelled only the child).
    return await agent_runs.end_team_run(request, end)


def _answer_of(result: object) -> str:
    if isinstance(result, str):
        return result
    if isinstance(result, dict) and isinstance(result.get("text"), str):
        return result["text"]
    return f"(the agent workflow returned no text: {str(result)[:200]})"
