"""EnvironmentWorkflow: one per isolation environment, alive as long as its worktree.

It owns all work done in its worktree: the set-up, then the coding agent's runs, one at a time in
arrival order (workflows/environment_runs.py). It holds the conversations attached to the
environment. When the last of them is closed, or when a command or the cleanup asks, it removes the
worktree through the one removal activity, marks the row destroyed and completes; never under a run.
A close waits for the queued runs; the cleanup and a plain `/worktree remove` are refused while the
agent works; a forced removal stops the run first. A refused removal (uncommitted changes) leaves it
waiting, its state saying why, until a forced destroy or a later retry on a clean worktree finishes the job.

Every removal is archived (refs/isolator/archive/<id>). The disk budget's removal, `hibernated`, keeps
the workflow and its row: the next message wakes it from the archive, and the set-up runs again. A run
that asks a person waits here for the answer (workflows/environment_approvals.py).
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from isolator.contracts import search_attributes
    from isolator.contracts.agent import Queued, RunRequest, StopReport, StopRequest
    from isolator.contracts.approvals import Decision, DecisionTaken
    from isolator.contracts.environment import HIBERNATE, ConversationSignal, DestroyRequest, EnvironmentState
    from isolator.contracts.environment import MarkDestroyedInput
    from isolator.contracts.message import ReplyInput
    from isolator.contracts.results import Delivery, PullRequestAsk
    from isolator.contracts.setup import SetupStateInput
    from isolator.contracts.worktree import RemovalReport, RestoredWorktree, RestoreWorktreeInput
    from workflows.chat import agent_texts
    from workflows.environment_approvals import answers_question, take_answer
    from workflows.environment_results import deliver_on_request
    from workflows.environment_runs import Runs
    from workflows.environment_setup import READY_TO_WORK, set_up, tear_down
    from workflows.steps.chat import replies
    from workflows.steps.environments import archives, records as environments, isolation

# A refused removal is tried again this often: a worktree cleaned by hand then goes by itself.
RETRY_REFUSED_REMOVAL = timedelta(hours=1)
# Enough to recognise any redelivery; older keys are forgotten so the state stays small.
KEYS_KEPT = 200
REPORTS_KEPT = 100
# The version from which IsolatorStatus follows the environment (refused, destroyed).
STATUS_SEARCH_ATTRIBUTE = "status-search-attribute"
# Removals that wait for the agent's queue to drain; any other unforced removal is refused meanwhile.
AFTER_THE_RUNS = ("closed", "path gone", "retry")


@workflow.defn
class EnvironmentWorkflow:
    @workflow.init
    def __init__(self, state: EnvironmentState) -> None:
        self._state = state
        self._runs = Runs(state)

    @workflow.run
    async def run(self, state: EnvironmentState) -> RemovalReport:
        if self._state.setup_state == "none" and workflow.patched(READY_TO_WORK):
            await self._set_up()
        while True:
            refused = self._state.status == "removal_refused"
            try:
                await workflow.wait_condition(
                    lambda: self._removal_ready() or self._state.setup_requested
                    or (bool(self._state.runs) and not self._runs.delivering)
                    or self._state.wake_requested or workflow.info().is_continue_as_new_suggested(),
                    timeout=RETRY_REFUSED_REMOVAL if refused else None,
                )
            except TimeoutError:
                self._request(DestroyRequest(force=False, reason="retry", key=f"retry:{workflow.now().isoformat()}"))
            if self._removal_ready():
                report = await self._remove()
                if self._state.status == "destroyed":
                    return report
            elif self._state.wake_requested:
                await self._wake()
            elif self._state.setup_requested:
                await self._set_up()
            elif self._state.runs and not self._runs.delivering:
                await self._runs.run_next(interrupted=self._forced_removal_due)
            elif workflow.info().is_continue_as_new_suggested():
                await workflow.wait_condition(workflow.all_handlers_finished)
                workflow.continue_as_new(self._state)

    @workflow.signal
    def attach(self, signal: ConversationSignal) -> None:
        if self._first_time(signal.key) and signal.conversation not in self._state.attached:
            self._state.attached.append(signal.conversation)
            if signal.conversation in self._state.closed:  # reopened
                self._state.closed.remove(signal.conversation)

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
            self._request(DestroyRequest(force=False, reason="closed", key=signal.key,
                                         requested_by=signal.conversation))

    @workflow.signal
    def destroy(self, request: DestroyRequest) -> None:
        if self._first_time(request.key):
            self._request(request)

    @workflow.update
    async def destroy_and_report(self, request: DestroyRequest) -> RemovalReport:
        """destroy, for callers that need to know what happened (commands, the cleanup)."""
        if request.key not in self._state.reports:
            self.destroy(request)
            await workflow.wait_condition(lambda: request.key in self._state.reports)
        return self._state.reports[request.key]

    @workflow.update
    async def set_up_again(self) -> str:
        """`/worktree setup`: run the set-up again, after what is running now; the set-up state after it."""
        runs = self._state.setup_runs + (1 if self._state.setup_state == "running" else 0)
        self._state.setup_requested = True
        await workflow.wait_condition(lambda: self._state.setup_runs > runs or self._removal_due())
        return self._state.setup_state

    @workflow.update
    async def setup_finished(self) -> str:
        """For a message that arrives during set-up: answered once set-up is no longer running."""
        await workflow.wait_condition(lambda: self._state.setup_state != "running")
        return self._state.setup_state

    @workflow.update
    def queue_run(self, request: RunRequest) -> Queued:
        """A message for the agent: queued behind the runs before it; refused while the worktree goes."""
        if self._state.status in ("removing", "hibernated", "destroyed") or self._forced_removal_due():
            return Queued("gone", request.run_id)
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
        if self._state.status != "active" or self._removal_due():
            return Delivery("off", agent_texts.worktree_going())
        return await self._runs.between_runs(lambda: deliver_on_request(self._state, ask))

    @workflow.query
    def state(self) -> EnvironmentState:
        return self._state

    async def _set_up(self) -> None:
        """The set-up, one step at a time; a forced removal stops it first (its commands' process
        group ended before the removal starts)."""
        running = asyncio.create_task(set_up(self._state))
        await workflow.wait_condition(lambda: running.done() or self._forced_removal_due())
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
            self._show_status()
        self._state.woken, self._state.wake_requested = woken, False

    def _forced_removal_due(self) -> bool:
        return self._removal_due() and self._state.pending is not None and self._state.pending.force

    def _first_time(self, key: str) -> bool:
        if key in self._state.seen_keys:
            return False
        self._state.seen_keys = [*self._state.seen_keys[-(KEYS_KEPT - 1):], key]
        return True

    def _request(self, request: DestroyRequest) -> None:
        """Queue a removal; requests arriving together are answered by one removal, forced if any was.
        While the agent works, an unforced removal that cannot wait for it is refused at once; the
        disk budget only hibernates an environment where nothing runs or waits."""
        if request.reason == HIBERNATE and not self._idle():
            self._answer([request.key], RemovalReport(outcome="refused", refused_because="busy",
                                                      message=f"`{self._state.environment.branch}` is in use."))
            return
        if self._runs.busy and not request.force and request.reason not in AFTER_THE_RUNS:
            self._answer([request.key], RemovalReport(outcome="refused", refused_because="agent_running",
                                                      message=agent_texts.agent_running(self._state.environment.branch)))
            return
        pending = self._state.pending
        if pending is None:
            self._state.pending = request
        elif request.force and not pending.force:
            self._state.pending = DestroyRequest(True, pending.reason, pending.key, pending.requested_by, pending.proof)
        self._state.waiting.append(request.key)

    def _idle(self) -> bool:
        state = self._state
        return (state.status == "active" and not self._runs.busy and state.pending is None
                and state.setup_state != "running" and not state.setup_requested)

    def _removal_due(self) -> bool:
        return self._state.pending is not None and self._state.status != "destroyed"

    def _removal_ready(self) -> bool:
        """Due, and not held back by the agent: forced, or its queue is empty."""
        return self._removal_due() and not self._runs.delivering and (self._forced_removal_due() or not self._runs.busy)

    async def _remove(self) -> RemovalReport:
        # Taken before the activity: a request arriving meanwhile (a forced one) starts a new removal.
        await self._runs.settle()
        request, waiting = self._state.pending, self._state.waiting
        assert request is not None
        self._state.pending, self._state.waiting = None, []
        if request.force:
            await self._runs.drop_all()
        environment = self._state.environment
        hibernated = self._state.status == "hibernated"  # no folder: nothing to tear down
        self._state.status = "removing"
        if not hibernated:
            await tear_down(self._state, request.requested_by,
                            key=f"{workflow.info().workflow_id}:teardown:{request.key}")
        report = await isolation.remove_worktree(environment, request.takes_dirty())
        archive = report.archive_refs[0] if report.archive_refs else None
        recorded = MarkDestroyedInput(environment.environment_id, request.recorded_reason(), archive, report.branch_tip)
        if report.outcome == "refused":
            self._state.status = "removal_refused"
            self._state.refusal = report.message
            self._show_status()
            if request.reason == "closed" and request.requested_by:
                await self._tell(request.requested_by, report.message, request.key)
        elif request.reason == HIBERNATE and archive is not None:
            await archives.mark_environment_hibernated(recorded)
            self._state.status = "hibernated"
            self._state.archive_ref, self._state.branch_tip = archive, report.branch_tip
            self._show_status()
        else:
            await environments.mark_environment_destroyed(recorded)
            self._state.status = "destroyed"
            self._state.refusal = None
            self._show_status()
        self._answer(waiting, report)
        return report

    def _answer(self, keys: list[str], report: RemovalReport) -> None:
        reports = {**self._state.reports, **{key: report for key in keys}}
        self._state.reports = dict(list(reports.items())[-REPORTS_KEPT:])

    def _show_status(self) -> None:
        """`IsolatorStatus` says what the environment is now (started as `active`). Runs started before
        it was kept up to date replay without it."""
        if workflow.patched(STATUS_SEARCH_ATTRIBUTE):
            workflow.upsert_search_attributes([search_attributes.STATUS.value_set(self._state.status)])

    async def _tell(self, conversation: str, text: str, key: str) -> None:
        platform, conversation_id = conversation.split(":", 1)
        await replies.send_reply(ReplyInput(platform, conversation_id, text, f"{workflow.info().workflow_id}:{key}"))
