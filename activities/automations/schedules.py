"""One Temporal Schedule per scheduled automation (`automation:<name>`), kept in step with its row.

The Schedule is what fires: durable, visible and pausable in the Temporal UI, and it catches up on a
firing missed while the service was down, within the automation's `catchup` window. Each firing is an
AutomationFiringWorkflow whose id is `automation:<name>-<the firing's time>`.
"""

from __future__ import annotations

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
    ScheduleState,
    ScheduleUpdate,
    ScheduleUpdateInput,
)
from temporalio.service import RPCError, RPCStatusCode

from isolator.contracts.automation import Automation, FiringInput

FIRING_WORKFLOW = "AutomationFiringWorkflow"
_OVERLAP = {"skip": ScheduleOverlapPolicy.SKIP, "buffer_one": ScheduleOverlapPolicy.BUFFER_ONE,
            "allow_all": ScheduleOverlapPolicy.ALLOW_ALL}
# Temporal's smallest catch-up window.
_MIN_CATCHUP = timedelta(seconds=10)


def schedule_id(name: str) -> str:
    return f"automation:{name}"


def schedule_of(automation: Automation, task_queue: str, paused: bool, note: str = "") -> Schedule:
    timing = automation.schedule
    assert timing is not None
    spec = ScheduleSpec(
        cron_expressions=[timing.cron] if timing.cron else [],
        intervals=[ScheduleIntervalSpec(every=timedelta(seconds=timing.every_seconds))] if timing.every_seconds else [],
        time_zone_name=timing.timezone,
        jitter=timedelta(seconds=timing.jitter_seconds) if timing.jitter_seconds else None,
    )
    return Schedule(
        action=ScheduleActionStartWorkflow(
            FIRING_WORKFLOW, FiringInput(automation.name), id=schedule_id(automation.name), task_queue=task_queue,
            static_summary=f"automation {automation.name}: {' '.join(automation.prompt.split())[:120]}"),
        spec=spec,
        policy=SchedulePolicy(overlap=_OVERLAP[timing.overlap],
                              catchup_window=max(timedelta(seconds=timing.catchup_seconds), _MIN_CATCHUP)),
        state=ScheduleState(paused=paused, note=note or f"{timing.spelled()} ({timing.timezone}), "
                                                        f"reports to {automation.report.spelled()}"),
    )


async def sync_schedule(client: Client, automation: Automation, task_queue: str, paused: bool) -> None:
    """Made, changed or removed to match the definition (an automation of events only has none)."""
    if automation.schedule is None:
        await remove_schedule(client, automation.name)
        return
    schedule = schedule_of(automation, task_queue, paused)
    try:
        await client.create_schedule(schedule_id(automation.name), schedule)
    except ScheduleAlreadyRunningError:
        def replace(current: ScheduleUpdateInput) -> ScheduleUpdate:
            return ScheduleUpdate(schedule=schedule)

        await client.get_schedule_handle(schedule_id(automation.name)).update(replace)


async def remove_schedule(client: Client, name: str) -> None:
    try:
        await client.get_schedule_handle(schedule_id(name)).delete()
    except RPCError as error:
        if error.status != RPCStatusCode.NOT_FOUND:
            raise


async def pause_schedule(client: Client, name: str, paused: bool, note: str) -> None:
    handle = client.get_schedule_handle(schedule_id(name))
    try:
        await (handle.pause(note=note) if paused else handle.unpause(note=note))
    except RPCError as error:
        if error.status != RPCStatusCode.NOT_FOUND:  # an automation of events only: nothing to pause
            raise
