"""The coding agent's runs in one environment, owned by its EnvironmentWorkflow.

Runs queue in arrival order, whichever attached conversation sent them, and run one at a time, each
an activity of this workflow with a child AgentRunWorkflow as its record in the Temporal UI. A run
whose worker dies is recorded as interrupted and never started again. `/stop` ends the
conversation's running run and drops its queued ones; a forced removal ends and drops them all; any
other removal waits until the queue is empty.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Awaitable, Callable, TypeVar

from temporalio import workflow
from temporalio.common import SearchAttributePair, TypedSearchAttributes
from temporalio.exceptions import ActivityError, ApplicationError, ChildWorkflowError
from temporalio.exceptions import TimeoutError as StepTimeout
from temporalio.workflow import ParentClosePolicy

with workflow.unsafe.imports_passed_through():
    from isolator.contracts import search_attributes
    from isolator.contracts.agent import AgentRunReport, DroppedRuns, InterruptedRun, Queued, RunRequest, StopReport
    from isolator.contracts.branch_updates import BranchUpdateRequest
    from isolator.contracts.environment import AgentRunInput, EnvironmentState
    from isolator import tracing
    from isolator.results_rules import kind_of
    from workflows.agent_run import AgentRunWorkflow, agent_run_workflow_id
    from workflows.agent_workflow_run import run_team_workflow
    from workflows.environment_approvals import ASKS_THE_HUMAN, release_held_reply, wait_for_answer
    from workflows.environment_results import DELIVERS_RESULTS, deliver_after_run
    from workflows.steps.results import branch_updates
    from workflows.steps.runs import queue as agent_runs

T = TypeVar("T")
# From this version, a run in a branch with a PR first takes in what others pushed to it (docs/results.md).
TAKES_IN_BRANCH_UPDATES = "take-in-branch-updates"


class Runs:
    def __init__(self, state: EnvironmentState) -> None:
        self.state = state
        self.ended: AgentRunReport | None = None  # the last run's end, for a `/stop` that waited for it
        self.delivering = False  # `/pr` pushes between runs: no run starts meanwhile
        self.closing: asyncio.Task[None] | None = None  # an answered request being closed (environment_approvals)
        self.finishing = False  # the running run has ended; only its results are being delivered

    @property
    def busy(self) -> bool:
        return bool(self.state.runs) or self.state.running is not None or self.delivering

    def queue(self, request: RunRequest) -> Queued:
        """Queue a run, or find it queued already (a retried hand-off); how many runs are ahead (a run
        that has ended, its results being delivered, is not one to wait for)."""
        running = self.state.running
        if running is not None and running.key == request.key:
            return Queued("queued", running.run_id, 0)
        waited_for = 1 if running is not None and not self.finishing else 0
        for place, queued in enumerate(self.state.runs):
            if queued.key == request.key:
                return Queued("queued", queued.run_id, place + waited_for)
        ahead = len(self.state.runs) + waited_for
        self.state.runs.append(request)
        return Queued("queued", request.run_id, ahead)

    async def run_next(self, interrupted: Callable[[], bool]) -> None:
        """Run the first queued run to its end; `interrupted` (a forced removal) stops it early."""
        request = self.state.runs.pop(0)
        with tracing.continuing(request.trace):  # the run is a step of the message that asked for it
            await self._run(request, interrupted)

    async def _run(self, request: RunRequest, interrupted: Callable[[], bool]) -> None:
        self.state.running, self.state.stop_running = request, False
        environment = self.state.environment
        run = AgentRunInput(await self._brought_up_to_date(request), environment, self.state.ports)
        # Scheduled in the same workflow task as its record starts: the record never delays the run.
        work = asyncio.create_task(run_team_workflow(run) if request.plan.kind == "workflow"
                                   else agent_runs.run_agent(run))
        platform, conversation = request.conversation.split(":", 1)
        await self.settle()  # the answered request's closing, beside this run that goes on with it
        record = await workflow.start_child_workflow(
            AgentRunWorkflow.run, run, id=agent_run_workflow_id(request.run_id),
            search_attributes=TypedSearchAttributes([
                SearchAttributePair(search_attributes.CODEBASE, environment.codebase.name),
                SearchAttributePair(search_attributes.BRANCH, environment.branch),
                SearchAttributePair(search_attributes.PLATFORM, platform),
                SearchAttributePair(search_attributes.CONVERSATION, request.conversation),  # `platform:id`
            ]),
            parent_close_policy=ParentClosePolicy.REQUEST_CANCEL,
            static_summary=f"agent run for {platform} {conversation} in {environment.branch}",
        )
        await workflow.wait_condition(lambda: work.done() or self.state.stop_running or interrupted())
        stopped = not work.done()
        if stopped:
            work.cancel()  # the activity stops the process group, then records and says "stopped"
        try:
            report = await work
        except (asyncio.CancelledError, ActivityError, ChildWorkflowError) as error:
            report = await _ended_without_report(run, error, stopped)
        self.finishing = report.status != "waiting"
        if report.status == "done" and workflow.patched(DELIVERS_RESULTS):
            await deliver_after_run(self.state, request)  # the service commits, pushes and opens the PR
        await record.signal(AgentRunWorkflow.finished, report)
        self.ended = report
        if report.status == "waiting" and report.waiting is not None and workflow.patched(ASKS_THE_HUMAN):
            # It asked a person: still "running" until the answer, which the next run goes on with.
            self.closing = await wait_for_answer(self.state, request, report.waiting, interrupted)
            if self.closing is None and self.state.stop_running:
                self.ended = AgentRunReport(report.run_id, "stopped")
        release_held_reply(self.state)  # it did not wait for an answer
        self.state.running, self.state.stop_running, self.finishing = None, False, False

    async def settle(self) -> None:
        """An answered request's closing, awaited: a workflow never ends or removes with it under way."""
        if self.closing is not None:
            closing, self.closing = self.closing, None
            await closing

    async def _brought_up_to_date(self, request: RunRequest) -> RunRequest:
        """The request as the agent gets it: after the worktree took in others' commits on its PR's
        branch (and the base, when asked), with a note first when there is something to know. The
        queued request stays as it came: its text is the user's, for the service's commit."""
        kind = kind_of(self.state.environment)
        wanted = request.merge_base or self.state.has_pull_request or kind in ("issue", "pull_request")
        if not wanted or not workflow.patched(TAKES_IN_BRANCH_UPDATES):
            return request
        try:
            update = await branch_updates.take_in_branch_updates(
                BranchUpdateRequest(self.state.environment, request.run_id, request.merge_base))
            note = update.note
        except ActivityError as error:  # origin or the host did not answer: the run goes on without
            cause = error.cause.message if error.cause is not None else str(error)  # type: ignore[attr-defined]
            note = (f"Before this run, `{self.state.environment.branch}` could not be brought up to date with "
                    f"origin ({cause}): what others pushed to it, if anything, is not in the worktree.")
        return dataclasses.replace(request, text=f"{note}\n\n{request.text}") if note else request

    async def stop(self, conversation: str) -> StopReport:
        """`/stop` for one conversation: its running run ended, its queued runs dropped."""
        if self.state.early_answer is not None and self.state.early_answer.conversation == conversation:
            release_held_reply(self.state)  # a reply held for the stopped run's wait: dropped with the rest
        dropped = [run for run in self.state.runs if run.conversation == conversation]
        self.state.runs = [run for run in self.state.runs if run.conversation != conversation]
        if dropped:
            await agent_runs.drop_agent_runs(DroppedRuns([run.run_id for run in dropped]))
        running = self.state.running
        if running is None or running.conversation != conversation:
            return StopReport(None, len(dropped))
        self.state.stop_running = True
        await workflow.wait_condition(lambda: self.state.running is None or self.state.running.run_id != running.run_id)
        ended = self.ended
        if ended is not None and ended.run_id == running.run_id and ended.status not in ("stopped", "interrupted"):
            # It ended by itself first (the stop met its last steps): it was not stopped, and is not said to be.
            return StopReport(None, len(dropped), finished=running.text, finished_as=ended.status)
        return StopReport(running.text, len(dropped))

    async def between_runs(self, step: Callable[[], Awaitable[T]]) -> T:
        """`step` once no run is running, with none started until it is over."""
        while self.state.running is not None or self.delivering:
            await workflow.wait_condition(lambda: self.state.running is None and not self.delivering)
        self.delivering = True
        try:
            return await step()
        finally:
            self.delivering = False

    async def drop_all(self) -> None:
        if self.state.runs:
            dropped, self.state.runs = self.state.runs, []
            await agent_runs.drop_agent_runs(DroppedRuns([run.run_id for run in dropped]))


async def _ended_without_report(run: AgentRunInput, error: BaseException, stopped: bool) -> AgentRunReport:
    """A run that returned no report: stopped (it recorded and said so itself), or its worker died,
    which is recorded as interrupted and told; an agent is not idempotent, so it is not run again."""
    run_id = run.run.run_id
    if stopped or isinstance(error, asyncio.CancelledError):
        return AgentRunReport(run_id, "stopped")
    cause = error.cause if isinstance(error, ActivityError) else error
    reason = ("its worker stopped answering" if isinstance(cause, StepTimeout)
              else "the service restarted while the agent worked" if _worker_shut_down(cause)
              else f"it failed unexpectedly ({cause})")
    await agent_runs.record_interrupted_run(InterruptedRun(run_id, run.run.conversation, run.environment.branch, reason))
    return AgentRunReport(run_id, "interrupted")


def _worker_shut_down(cause: BaseException | None) -> bool:
    """The failure Temporal gives an activity whose worker shut down before it ended."""
    return isinstance(cause, ApplicationError) and cause.type == "WorkerShutdown"
