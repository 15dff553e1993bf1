"""Removing an environment's worktree, owned by its EnvironmentWorkflow: the requests, the one
removal they lead to, and what happens when it is refused.

Requests arriving together are answered by one removal, forced if any was. A close waits for the
agent's queue to drain; any other unforced removal is refused while the agent works. Every removal
is archived first; a dirty worktree is refused only to a person's plain removal (a command, the API,
the dashboard).

A refused removal that a person asked for ends there: they are told why and what to do, and nothing
waits. A refused removal the service asked for itself (the last conversation closed, a cleanup) is
kept and tried again every hour: `/status` and the dashboard show it, a message in any of the
environment's conversations cancels it, and when it goes through at last its conversations are told.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from isolator.contracts import search_attributes
    from isolator.contracts.environment import ASKED_BY_A_PERSON, HIBERNATE, DestroyRequest, EnvironmentState
    from isolator.contracts.environment import MarkDestroyedInput
    from isolator.contracts.message import ReplyInput
    from isolator.contracts.worktree import RemovalReport
    from workflows.chat import agent_texts, worktree_texts
    from workflows.environment_runs import Runs
    from workflows.environment_setup import tear_down
    from workflows.steps.chat import replies
    from workflows.steps.environments import archives, records as environments, isolation

# The service's own refused removal is tried again this often: a worktree repaired by hand then goes.
RETRY_REFUSED_REMOVAL = timedelta(hours=1)
REPORTS_KEPT = 100
# The version from which IsolatorStatus follows the environment (refused, destroyed).
STATUS_SEARCH_ATTRIBUTE = "status-search-attribute"
# The version from which only the service's own refused removals are tried again (before it, every
# refused removal was, as "retry", and said nothing when it went through).
ONLY_THE_SERVICE_RETRIES = "only-the-service-retries"
# Removals that wait for the agent's queue to drain; any other unforced removal is refused meanwhile.
AFTER_THE_RUNS = ("closed", "path gone", "retry")
# A refused removal that is not tried again: a person's, and the disk budget's hibernation, which the
# next scheduled cleanup decides again.
ENDS_AT_A_REFUSAL = (*ASKED_BY_A_PERSON, HIBERNATE)


class Removals:
    def __init__(self, state: EnvironmentState, runs: Runs) -> None:
        self.state = state
        self.runs = runs

    def due(self) -> bool:
        return self.state.pending is not None and self.state.status != "destroyed"

    def forced_due(self) -> bool:
        return self.due() and self.state.pending is not None and self.state.pending.force

    def ready(self) -> bool:
        """Due, and not held back by the agent: forced, or its queue is empty."""
        return self.due() and not self.runs.delivering and (self.forced_due() or not self.runs.busy)

    def retry_in(self) -> timedelta | None:
        """How long the workflow waits before trying a refused removal again; None: nothing to retry."""
        return RETRY_REFUSED_REMOVAL if self.state.status == "removal_refused" else None

    def retry(self) -> None:
        """The hour is up: the service's refused removal once more, as it was asked (if a message did not
        cancel it meanwhile)."""
        if self.state.status != "removal_refused":
            return
        key = f"retry:{workflow.now().isoformat()}"
        kept = self.state.retrying
        if kept is not None:
            self.request(DestroyRequest(False, kept.reason, key, kept.requested_by, kept.proof))
        elif workflow.patched(ONLY_THE_SERVICE_RETRIES):
            # Refused before this version, which kept no request (this run continued from it): who
            # asked is not known, so it ends here, as a person's refusal does.
            self._end_refusal()
        else:
            self.request(DestroyRequest(force=False, reason="retry", key=key))

    def cancel_retries(self) -> None:
        """A message in one of its conversations: the worktree is in use again, so the service's refused
        removal is no longer tried (unless its retry has begun already)."""
        if self.state.retrying is not None and self.state.status == "removal_refused" and self.state.pending is None:
            self._end_refusal()

    def _end_refusal(self) -> None:
        self.state.retrying, self.state.refusal, self.state.status = None, None, "active"
        show_status(self.state)

    def request(self, request: DestroyRequest) -> None:
        """Queue a removal; requests arriving together are answered by one removal, forced if any was.
        While the agent works, an unforced removal that cannot wait for it is refused at once; the
        disk budget only hibernates an environment where nothing runs or waits."""
        if request.reason == HIBERNATE and not self._idle():
            self.answer([request.key], RemovalReport(outcome="refused", refused_because="busy",
                                                     message=f"`{self.state.environment.branch}` is in use."))
            return
        if self.runs.busy and not request.force and request.reason not in AFTER_THE_RUNS:
            self.answer([request.key], RemovalReport(outcome="refused", refused_because="agent_running",
                                                     message=agent_texts.agent_running(self.state.environment.branch)))
            return
        pending = self.state.pending
        if pending is None:
            self.state.pending = request
        elif request.force and not pending.force:
            self.state.pending = DestroyRequest(True, pending.reason, pending.key, pending.requested_by, pending.proof)
        self.state.waiting.append(request.key)

    def answer(self, keys: list[str], report: RemovalReport) -> None:
        reports = {**self.state.reports, **{key: report for key in keys}}
        self.state.reports = dict(list(reports.items())[-REPORTS_KEPT:])

    async def remove(self) -> RemovalReport:
        # Taken before the activity: a request arriving meanwhile (a forced one) starts a new removal.
        await self.runs.settle()
        state = self.state
        request, waiting = state.pending, state.waiting
        assert request is not None
        state.pending, state.waiting = None, []
        if request.force:
            await self.runs.drop_all()
        environment = state.environment
        hibernated = state.status == "hibernated"  # no folder: nothing to tear down
        retried = state.status == "removal_refused"
        state.status = "removing"
        if not hibernated:
            await tear_down(state, request.requested_by, key=f"{workflow.info().workflow_id}:teardown:{request.key}")
        report = await isolation.remove_worktree(environment, request.takes_dirty())
        archive = report.archive_refs[0] if report.archive_refs else None
        recorded = MarkDestroyedInput(environment.environment_id, request.recorded_reason(), archive, report.branch_tip)
        if report.outcome == "refused":
            await self._refused(request, report, retried, hibernated)
        elif request.reason == HIBERNATE and archive is not None:
            await archives.mark_environment_hibernated(recorded)
            state.status = "hibernated"
            state.archive_ref, state.branch_tip = archive, report.branch_tip
            show_status(state)
        else:
            await environments.mark_environment_destroyed(recorded)
            state.status = "destroyed"
            state.refusal = None
            show_status(state)
            if state.retrying is not None and request.key.startswith("retry:"):
                await self._tell_all(worktree_texts.removed_at_last(environment.branch, report.message), request.key)
            state.retrying = None
        self.answer(waiting, report)
        return report

    async def _refused(self, request: DestroyRequest, report: RemovalReport, retried: bool, hibernated: bool) -> None:
        state = self.state
        if request.reason in ENDS_AT_A_REFUSAL and workflow.patched(ONLY_THE_SERVICE_RETRIES):
            # Whoever asked hears why; a retry of the service's own removal, if one waits, goes on.
            state.status = "removal_refused" if state.retrying is not None else "hibernated" if hibernated else "active"
            return
        if workflow.patched(ONLY_THE_SERVICE_RETRIES):
            state.retrying = request
        state.status = "removal_refused"
        state.refusal = report.message
        show_status(state)
        if request.reason == "closed" and request.requested_by and not retried:
            text = report.message + (f" {worktree_texts.RETRIED_HOURLY}" if state.retrying is not None else "")
            await self._tell(request.requested_by, text, request.key)

    async def _tell_all(self, text: str, key: str) -> None:
        """Every conversation the environment had, open or closed, once."""
        for conversation in dict.fromkeys([*self.state.attached, *self.state.closed]):
            await self._tell(conversation, text, f"{key}:{conversation}")

    async def _tell(self, conversation: str, text: str, key: str) -> None:
        platform, conversation_id = conversation.split(":", 1)
        await replies.send_reply(ReplyInput(platform, conversation_id, text, f"{workflow.info().workflow_id}:{key}"))

    def _idle(self) -> bool:
        state = self.state
        return (state.status == "active" and not self.runs.busy and state.pending is None
                and state.setup_state != "running" and not state.setup_requested)


def show_status(state: EnvironmentState) -> None:
    """`IsolatorStatus` says what the environment is now (started as `active`). Runs started before
    it was kept up to date replay without it."""
    if workflow.patched(STATUS_SEARCH_ATTRIBUTE):
        workflow.upsert_search_attributes([search_attributes.STATUS.value_set(state.status)])
