"""Stubs of activities/automations/firings.py: a firing's steps."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

from isolator.contracts.automation import FinishFiring, FiringNote, FiringPlan, PrepareFiring, RunState, RunWait
from workflows.steps.options import HEARTBEAT_TIMEOUT, LOCAL_OPTIONS, RETRY_POLICY

# A step of the database and a reply: short, heartbeated by the worker, retried.
_SHORT = timedelta(minutes=2)


# From this version a firing is prepared by a local activity: one task of its workflow less before the
# agent starts (bench/RESULTS.md, run CB's control).
PREPARES_LOCALLY = "firing-prepared-locally"


async def prepare_firing(request: PrepareFiring) -> FiringPlan:
    if workflow.patched(PREPARES_LOCALLY):
        return await workflow.execute_local_activity("prepare_firing", request, result_type=FiringPlan,
                                                     **LOCAL_OPTIONS)
    return await workflow.execute_activity(
        "prepare_firing", request, result_type=FiringPlan, start_to_close_timeout=_SHORT,
        heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=RETRY_POLICY)


async def firing_run(workflow_id: str, run_id: str) -> None:
    await workflow.execute_activity("firing_run", args=[workflow_id, run_id], start_to_close_timeout=_SHORT,
                                    heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=RETRY_POLICY)


async def wait_for_run(wait: RunWait) -> RunState:
    return await workflow.execute_activity(
        "wait_for_run", wait, result_type=RunState, start_to_close_timeout=timedelta(seconds=wait.seconds + 60),
        heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=RETRY_POLICY)


async def note_firing(note: FiringNote) -> None:
    await workflow.execute_activity("note_firing", note, start_to_close_timeout=_SHORT,
                                    heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=RETRY_POLICY)


async def finish_firing(finish: FinishFiring) -> bool:
    return await workflow.execute_activity(
        "finish_firing", finish, result_type=bool, start_to_close_timeout=_SHORT,
        heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=RETRY_POLICY)
