"""The `isolation-cleanup` schedule: created when a worker starts, updated (never duplicated) after."""

from __future__ import annotations

import logging
from datetime import timedelta

from temporalio.client import (
    Client,
    Schedule,
    ScheduleActionStartWorkflow,
    ScheduleAlreadyRunningError,
    ScheduleIntervalSpec,
    ScheduleOverlapPolicy,
    SchedulePolicy,
    ScheduleSpec,
    ScheduleUpdate,
    ScheduleUpdateInput,
)

from isolator.contracts.cleanup import SCHEDULE_ID
from isolator.settings import Settings
from workflows.cleanup import CleanupWorkflow

log = logging.getLogger(__name__)


def cleanup_schedule(settings: Settings) -> Schedule:
    return Schedule(
        action=ScheduleActionStartWorkflow(CleanupWorkflow.run, id=SCHEDULE_ID, task_queue=settings.task_queue,
                                           static_summary="the scheduled cleanup of every codebase"),
        spec=ScheduleSpec(intervals=[ScheduleIntervalSpec(every=timedelta(hours=settings.cleanup_interval_hours))]),
        # a sweep still running when the next is due: the next is skipped, never stacked
        policy=SchedulePolicy(overlap=ScheduleOverlapPolicy.SKIP),
    )


async def ensure_cleanup_schedule(client: Client, settings: Settings) -> None:
    schedule = cleanup_schedule(settings)
    try:
        await client.create_schedule(SCHEDULE_ID, schedule)
        log.info("created schedule %s (every %d h)", SCHEDULE_ID, settings.cleanup_interval_hours)
    except ScheduleAlreadyRunningError:

        def replace(current: ScheduleUpdateInput) -> ScheduleUpdate:
            # Interval, action and policy follow the configuration; a pause (and its note) is an operator's.
            schedule.state = current.description.schedule.state
            return ScheduleUpdate(schedule=schedule)

        await client.get_schedule_handle(SCHEDULE_ID).update(replace)
        log.info("updated schedule %s (every %d h)", SCHEDULE_ID, settings.cleanup_interval_hours)
