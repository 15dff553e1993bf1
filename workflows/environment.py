"""EnvironmentWorkflow: one per isolation environment, alive as long as its worktree.

It owns all work done in its worktree: the set-up, then the coding agent's runs, one at a time in
arrival order (workflows/environment_runs.py). It holds the conversations attached to the
environment. When the last of them is closed, or when a command or the cleanup asks, it removes the
worktree through the one removal activity, marks the row destroyed and completes; never under a run
(workflows/environment_removal.py: the requests, the removal, and a refused one: a person's ends
there, the service's own is tried again every hour until it goes or a message cancels it).

Every removal is archived (refs/isolator/archive/<id>). The disk budget's removal, `hibernated`, keeps
the workflow and its row: the next message wakes it from the archive, and the set-up runs again. A run
that asks a person waits here for the answer (workflows/environment_approvals.py).
"""

from __future__ import annotations

import asyncio
import dataclasses

from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from isolator.contracts.agent import Queued, RunRequest, StopReport, StopRequest
    from isolator.contracts.approvals import Decision, DecisionTaken
    from isolator.contracts.environment import ConversationSignal, DestroyRequest, EnvironmentState
    from isolator.contracts.move import EnvironmentMoved
    from isolator.contracts.results import Delivery, PullRequestAsk
    from isolator.contracts.setup import SetupStateInput
    from isolator.contracts.worktree import RemovalReport, RestoredWorktree, RestoreWorktreeInput
    from workflows.chat import agent_texts
    from workflows.environment_approvals import answers_question, take_answer
    from workflows.environment_removal import Removals, show_status
    from workflows.environment_results import deliver_on_request
    from workflows.environment_runs import Runs
    from workflows.environment_setup import READY_TO_WORK, outcome_again, set_up
    from workflows.steps.environments import archives, records as environments, isolation

# Enough to recognise any redelivery; older keys are forgotten so the state stays small.
KEYS_KEPT = 200


@workflow.defn
class EnvironmentWorkflow:
    @workflow.init
    def __init__(self, state: EnvironmentState) -> None:
        self._state = state
        self._runs = Runs(state)
        self._removals = Removals(state, self._runs)

    @workflow.run
    async def run(self, state: EnvironmentState) -> RemovalReport:
        if self._state.setup_state == "none" and workflow.patched(READY_TO_WORK):
            await self._set_up()
        while True:
            try:
                await workflow.wait_condition(
                    lambda: self._removals.ready() or self._state.setup_requested
                    or (bool(self._state.runs) and not self._runs.delivering)
                    or self._state.wake_requested or workflow.info().is_continue_as_new_suggested(),
                    timeout=self._removals.retry_in(),
                )
            except TimeoutError:
                self._removals.retry()
            if self._removals.ready():
                report = await self._removals.remove()
                if self._state.status == "destroyed":
                    return report
            elif self._state.wake_requested:
                await self._wake()
            elif self._state.setup_requested:
                await self._set_up()
            elif self._state.runs and not self._runs.delivering:
                await self._runs.run_next(interrupted=self._removals.forced_due)
            elif workflow.info().is_continue_as_new_suggested():
                await workflow.wait_condition(workflow.all_handlers_finished)
                workflow.continue_as_new(self._state)

    @workflow.signal
    def attach(self, signal: ConversationSignal) -> None:
        if self._first_time(signal.key) and signal.conversation not in self._state.attached:
            self._state.attached.append(signal.conversation)
            if signal.conversation in self._state.closed:  # reopened
                self._state.closed.remove(signal.conversation)
            self._removals.cancel_retries()  # in use again

    @workflow.signal
    def detach(self, signal: ConversationSignal) -> None:
        if self._first_time(signal.key) and signal.conversation in self._state.attached:
            self._state.attached.remove(signal.conversation)

    @workflow.signal
    def conversation_closed(self, signal: ConversationSignal) -> None:
        if not self._first_time(signal.key):
            return
        if signal.conversation in self._state.attached:
            self._state.attached.remove(signal.conversation)
        if signal.conversation not in self._state.closed:
            self._state.closed.append(signal.conversation)
        if not self._state.attached and self._state.status in ("active", "hibernated") and self._state.pending is None:
            self._removals.request(DestroyRequest(force=False, reason="closed", key=signal.key,
                                                  requested_by=signal.conversation))

    @workflow.signal
    def moved(self, moved: EnvironmentMoved) -> None:
        """Its codebase moved to another host (workflows/move.py): its worktree is there now, at this path."""
        if self._first_time(moved.key):
            self._state.environment = dataclasses.replace(self._state.environment, codebase=moved.codebase,
                                                          working_path=moved.working_path)

    @workflow.signal
    def destroy(self, request: DestroyRequest) -> None:
        if self._first_time(request.key):
            self._removals.request(request)

    @workflow.update
    async def destroy_and_report(self, request: DestroyRequest) -> RemovalReport:
        """destroy, for callers that need to know what happened (commands, the cleanup)."""
        if request.key not in self._state.reports:
            self.destroy(request)
            await workflow.wait_condition(lambda: request.key in self._state.reports)
        return self._state.reports[request.key]

    @workflow.update
    async def set_up_again(self) -> str:
        """`/worktree setup`: run the set-up again, after what is running now; the set-up state after it
        (or that the repository configures none)."""
        runs = self._state.setup_runs + (1 if self._state.setup_state == "running" else 0)
        self._state.setup_requested = True
        await workflow.wait_condition(lambda: self._state.setup_runs > runs or self._removals.due())
        return outcome_again(self._state)

    @workflow.update
    async def setup_finished(self) -> str:
        """For a message that arrives during set-up: answered once set-up is no longer running."""
        await workflow.wait_condition(lambda: self._state.setup_state != "running")
        return self._state.setup_state

    @workflow.update
    def queue_run(self, request: RunRequest) -> Queued:
        """A message for the agent: queued behind the runs before it; refused while the worktree goes."""
        if self._state.status in ("removing", "hibernated", "destroyed") or self._removals.forced_due():
            return Queued("gone", request.run_id)
        self._removals.cancel_retries()  # a message here: the worktree is in use again
        if answers_question(self._state, request):  # the asker's reply: its run goes on with it, first
            return Queued("queued", request.run_id, 0)
        return self._runs.queue(request)

    @workflow.update
    async def answer_approval(self, decision: Decision) -> DecisionTaken:
        return await take_answer(self._state, decision)  # checked by api/approvals.py; taken once

    @workflow.update
    async def stop_runs(self, request: StopRequest) -> StopReport:
        """`/stop`: the conversation's running run ended (its processes gone), its queued ones dropped."""
        return await self._runs.stop(request.conversation)

    @workflow.update
    async def wake(self) -> RestoredWorktree:
        """A message for a hibernated environment: its worktree back from the archive (then its set-up
        runs again); refused when it cannot come back, the reason said."""
        if self._state.status != "hibernated":
            return RestoredWorktree("restored" if self._state.status == "active" else "refused",
                                    "" if self._state.status == "active" else agent_texts.worktree_going())
        self._state.wake_requested = True
        await workflow.wait_condition(lambda: not self._state.wake_requested)
        assert self._state.woken is not None
        return self._state.woken

    @workflow.update
    async def open_pull_request(self, ask: PullRequestAsk) -> Delivery:
        """`/pr <title>`: the work so far committed, pushed and proposed, between runs."""
        if self._state.status != "active" or self._removals.due():
            return Delivery("off", agent_texts.worktree_going())
        return await self._runs.between_runs(lambda: deliver_on_request(self._state, ask))

    @workflow.query
    def state(self) -> EnvironmentState:
        return self._state

    async def _set_up(self) -> None:
        """The set-up, one step at a time; a forced removal stops it first (its commands' process
        group ended before the removal starts)."""
        running = asyncio.create_task(set_up(self._state))
        await workflow.wait_condition(lambda: running.done() or self._removals.forced_due())
        if not running.done():
            running.cancel()
        try:
            await running
        except (asyncio.CancelledError, ActivityError) as error:  # stopped, or its worker died: not run again
            workflow.logger.warning("set-up of %s did not finish: %r", self._state.environment.branch,
                                    getattr(error, "cause", error))
            self._state.setup_state = "failed"
            self._state.setup_runs += 1
            await environments.record_setup_state(SetupStateInput(self._state.environment.environment_id, "failed"))

    async def _wake(self) -> None:
        environment = self._state.environment
        assert self._state.archive_ref is not None
        woken = await isolation.restore_worktree(RestoreWorktreeInput(
            environment.codebase, environment.working_path, environment.branch, self._state.archive_ref,
            self._state.branch_tip, environment.provider,
        ))
        if woken.outcome == "restored":
            await archives.mark_environment_awake(environment.environment_id)
            self._state.status = "active"
            self._state.setup_requested = True  # the set-up runs again in the worktree it made before
            show_status(self._state)
        self._state.woken, self._state.wake_requested = woken, False

    def _first_time(self, key: str) -> bool:
        if key in self._state.seen_keys:
            return False
        self._state.seen_keys = [*self._state.seen_keys[-(KEYS_KEPT - 1):], key]
        return True
