"""Stubs of activities/automations/repository.py: a repository's own automations, read and matched."""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

from isolator.contracts.automation import CommittedAutomations, Reconciled, ReconcileInput
from isolator.contracts.codebase import Codebase
from workflows.steps.options import HEARTBEAT_TIMEOUT, HOST_PICKUP_TIMEOUT, RETRY_POLICY, host_queue


async def read_committed_automations(codebase: Codebase) -> CommittedAutomations:
    return await workflow.execute_activity(
        "read_committed_automations", codebase, result_type=CommittedAutomations, task_queue=host_queue(codebase.host),
        start_to_close_timeout=timedelta(minutes=2), schedule_to_start_timeout=HOST_PICKUP_TIMEOUT,
        heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=RETRY_POLICY)


async def reconcile_automations(request: ReconcileInput) -> Reconciled:
    return await workflow.execute_activity(
        "reconcile_automations", request, result_type=Reconciled, start_to_close_timeout=timedelta(minutes=2),
        heartbeat_timeout=HEARTBEAT_TIMEOUT, retry_policy=RETRY_POLICY)
