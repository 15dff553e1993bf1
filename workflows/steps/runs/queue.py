"""Stubs of activities/runs/queue.py and activities/runs/run_agent.py: the coding agent's runs."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.workflow import ActivityCancellationType

from isolator.contracts.agent import (
    AgentRunReport,
    DroppedRuns,
    InterruptedRun,
    Queued,
    QueueRunInput,
    RunStart,
    StopReport,
    StopRequest,
    TeamRunEnd,
)
from isolator.contracts.environment import AgentRunInput
from workflows.steps.options import HEARTBEAT_TIMEOUT, LOCAL_OPTIONS, RETRY_POLICY, host_queue

# A run's worker that stops heartbeating is taken for dead this soon: long enough for a Temporal
# server restart to pass unnoticed. Its worker heartbeats every second (workers/worker.py), and a
# `/stop` travels with a heartbeat's answer, so it arrives within about a second.
RUN_HEARTBEAT_TIMEOUT = timedelta(seconds=15)
# Beyond the agent's own time limit: its stop, the summary, a slow platform.
_MARGIN = timedelta(minutes=5)


def agent_queue(host: str) -> str:
    """The host's queue for agent runs, served AGENT_MAX_CONCURRENT at a time (Settings.agent_task_queue)."""
    return f"{host_queue(host)}/agents"


async def queue_agent_run(request: QueueRunInput) -> Queued:
    return await workflow.execute_local_activity("queue_agent_run", request, result_type=Queued, **LOCAL_OPTIONS)


async def run_agent(request: AgentRunInput) -> AgentRunReport:
    """An agent is not idempotent: a run whose worker died is reported interrupted, never run again."""
    return await workflow.execute_activity(
        "run_agent", request, result_type=AgentRunReport,
        task_queue=agent_queue(request.environment.codebase.host),
        start_to_close_timeout=timedelta(minutes=request.run.plan.timeout_minutes) + _MARGIN,
        heartbeat_timeout=RUN_HEARTBEAT_TIMEOUT,
        retry_policy=RetryPolicy(maximum_attempts=1),
        # `/stop` and a forced removal wait until the agent's process group is gone.
        cancellation_type=ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    )


async def stop_agent_runs(request: StopRequest) -> StopReport:
    return await workflow.execute_activity(
        "stop_agent_runs", request, result_type=StopReport, start_to_close_timeout=timedelta(minutes=5),
        heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=RETRY_POLICY,
    )


async def drop_agent_runs(dropped: DroppedRuns) -> None:
    await workflow.execute_local_activity("drop_agent_runs", dropped, **LOCAL_OPTIONS)


async def record_interrupted_run(run: InterruptedRun) -> None:
    await workflow.execute_activity(
        "record_interrupted_run", run, start_to_close_timeout=timedelta(seconds=30),
        schedule_to_close_timeout=timedelta(hours=6), heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=RETRY_POLICY,
    )


async def begin_team_run(request: AgentRunInput) -> RunStart:
    """A run of AGENT_WORKFLOW: recorded as started, and the worktree as it found it."""
    return await workflow.execute_activity(
        "begin_team_run", request, result_type=RunStart, task_queue=host_queue(request.environment.codebase.host),
        start_to_close_timeout=timedelta(minutes=2), heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=RETRY_POLICY,
    )


async def end_team_run(request: AgentRunInput, end: TeamRunEnd) -> AgentRunReport:
    return await workflow.execute_activity(
        "end_team_run", args=[request, end], result_type=AgentRunReport,
        task_queue=host_queue(request.environment.codebase.host),
        start_to_close_timeout=timedelta(minutes=5), heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=RETRY_POLICY,
    )
