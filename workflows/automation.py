"""AutomationFiringWorkflow: one firing of an automation (docs/automations.md), started by its Temporal
Schedule (`automation:<name>-<time>`), by an event (`automation:<name>:<event id>`, so a redelivered
event fires once) or by a person (`run now`).

It hands the rendered prompt to the message workflow as a message of the firing's own conversation
(platform `automation`), so the run goes through everything a chat run does, then waits for the run's
end, asks for a draft PR when the automation delivers one, and reports in the automation's place. It
runs until its run ends, which is what makes the schedule skip a firing while the last one runs.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from isolator.contracts.automation import (
        FinishFiring,
        FiringEnd,
        FiringInput,
        FiringNote,
        FiringPlan,
        PrepareFiring,
        RunState,
        RunWait,
    )
    from isolator.contracts.environment import conversation_key
    from isolator.contracts.message import IsolationHints, MessageInput, Resolution, message_workflow_id
    from isolator.contracts.results import PullRequestAsk
    from workflows.message import MessageWorkflow
    from workflows.steps.automations import firings
    from workflows.steps.results import delivery as results

PLATFORM = "automation"
# A run still going after this gets a start line in the report place; shorter ones get only their end.
START_LINE_AFTER = timedelta(minutes=1)
# How long one wait for the run lasts before the workflow waits again (each a step of its history).
WAIT_STEP = timedelta(hours=1)


@workflow.defn
class AutomationFiringWorkflow:
    @workflow.run
    async def run(self, firing: FiringInput) -> FiringEnd:
        workflow_id = workflow.info().workflow_id
        plan = await firings.prepare_firing(PrepareFiring(firing, workflow_id))
        if plan.outcome == "skipped":  # paused, removed, switched off: nothing is said
            return FiringEnd("refused", plan.reason)
        if plan.outcome == "refused":
            await firings.note_firing(FiringNote(plan, f"Automation `{firing.name}` did not run: {plan.reason}.",
                                                 f"{workflow_id}:refused"))
            return FiringEnd("refused", plan.reason)
        resolution = await self._hand_over(firing, plan, workflow_id)
        if resolution.run_id is None:
            end = FiringEnd("failed", _why_not_run(resolution))
        else:
            await firings.firing_run(workflow_id, resolution.run_id)
            run = await self._wait(firing, plan, resolution.run_id, workflow_id)
            end = await self._end(firing, plan, resolution, run, workflow_id)
        await firings.finish_firing(FinishFiring(workflow_id, firing.name, plan, end))
        return end

    async def _hand_over(self, firing: FiringInput, plan: FiringPlan, workflow_id: str) -> Resolution:
        key = workflow_id.removeprefix("automation:")
        message = MessageInput(
            platform=PLATFORM, conversation_id=plan.conversation_id, text=plan.prompt, message_key=key,
            default_host="", hints=IsolationHints(repository_url=plan.repository_url), user=f"automation:{firing.name}")
        return await workflow.execute_child_workflow(
            MessageWorkflow.run, message, id=message_workflow_id(PLATFORM, key),
            static_summary=f"automation {firing.name}: {' '.join(plan.prompt.split())[:80]}")

    async def _wait(self, firing: FiringInput, plan: FiringPlan, run_id: str, workflow_id: str) -> RunState:
        run = await firings.wait_for_run(RunWait(plan.conversation_id, run_id, START_LINE_AFTER.total_seconds()))
        if not run.finished:
            await firings.note_firing(FiringNote(plan, f"Automation `{firing.name}` is working on it.",
                                                 f"{workflow_id}:started"))
        while not run.finished:
            run = await firings.wait_for_run(RunWait(plan.conversation_id, run_id, WAIT_STEP.total_seconds()))
        return run

    async def _end(self, firing: FiringInput, plan: FiringPlan, resolution: Resolution, run: RunState,
                   workflow_id: str) -> FiringEnd:
        if run.status != "done":
            said = [line for line in (run.closing or run.answer).strip().splitlines() if line.strip()]
            why = f" ({' '.join(said[-1].split())[:300]})" if said else ""
            return FiringEnd("failed", f"its run ended {run.status.replace('_', ' ')}{why}", run.cost_usd)
        if plan.results != "pr":
            return FiringEnd("done", run.answer, run.cost_usd)
        if not run.changed:
            return FiringEnd("nothing", run.answer, run.cost_usd)
        assert resolution.environment_id is not None
        title = f"{firing.name}: {' '.join(run.answer.split())[:60] or 'the automation s work'}"
        delivery = await results.ask_pull_request(PullRequestAsk(
            resolution.environment_id, conversation_key(PLATFORM, plan.conversation_id), title, f"{workflow_id}:pr"))
        if delivery.pull_request is not None:
            return FiringEnd("done", run.answer, run.cost_usd, delivery.pull_request.url)
        if delivery.outcome == "nothing":
            return FiringEnd("nothing", run.answer, run.cost_usd)
        return FiringEnd("failed", delivery.text or f"its work was not delivered ({delivery.outcome})", run.cost_usd)


def _why_not_run(resolution: Resolution) -> str:
    said = " ".join(resolution.replies[-1].split())[:300] if resolution.replies else ""
    return f"no agent ran ({resolution.outcome}{': ' + said if said else ''})"
