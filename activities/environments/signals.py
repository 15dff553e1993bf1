"""Talking to environment workflows from other workflows: start-and-attach, signals, destroy-and-wait.

These are activities because they need the Temporal client: starting a workflow that may already
run (signal-with-start) and waiting for an update's answer are client calls.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import activity
from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowHandle,
    WorkflowQueryFailedError,
    WorkflowQueryRejectedError,
)
from temporalio.common import (
    SearchAttributePair,
    TypedSearchAttributes,
    WorkflowIDReusePolicy,
)
from temporalio.exceptions import ApplicationError, WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from isolator.contracts import search_attributes
from isolator.contracts.environment import (
    AttachRequest,
    ConversationSignal,
    DestroyEnvironmentInput,
    EnvironmentRef,
    EnvironmentState,
    SignalRequest,
    environment_workflow_id,
)
from isolator.contracts.errors import RESTORE_REFUSED
from isolator.contracts.repository import RepositorySetup
from isolator.contracts.results import Delivery, PullRequestAsk
from isolator.contracts.worktree import RemovalReport, RestoredWorktree

ENVIRONMENT_WORKFLOW = "EnvironmentWorkflow"
# A destroyed environment's workflow completed: its ID is never started again. One that failed or
# was terminated while its row is still active may be.
_REUSE = WorkflowIDReusePolicy.ALLOW_DUPLICATE_FAILED_ONLY
# Its workflow tasks are short (an update, a signal, a step's end); bench/hosts.py measures the failover.
ENVIRONMENT_TASK_TIMEOUT = timedelta(seconds=2)
# `/status` waits this long at most for an environment's workflow to say whether a removal is retried.
ASK_SECONDS = 2.0


class EnvironmentSignalActivities:
    def __init__(self, client: Client, task_queue: str) -> None:
        self.client = client
        self.task_queue = task_queue

    @activity.defn
    async def attach_environment(self, request: AttachRequest) -> None:
        """Attach the conversation, starting the environment's workflow if it is not running yet."""
        attach = {"start_signal": "attach", "start_signal_args": [request.signal]} if request.signal else {}
        try:
            await self._start(request.environment, request.setup, **attach)
        except WorkflowAlreadyStartedError:
            activity.logger.info("environment %s is already destroyed or running; attach ignored",
                                 request.environment.environment_id)
        if request.signal and request.previous_environment_id and request.previous_environment_id != request.environment.environment_id:
            await self._signal(request.previous_environment_id, "detach", request.signal)

    @activity.defn
    async def signal_environment(self, request: SignalRequest) -> None:
        await self._signal(request.environment_id, request.name, request.signal)

    @activity.defn
    async def destroy_environment(self, request: DestroyEnvironmentInput) -> RemovalReport:
        """Have the environment's workflow remove it (starting one for an environment that has none)."""
        handle = self.client.get_workflow_handle(environment_workflow_id(request.environment.environment_id))
        if not await self._is_running(handle):
            try:
                await self._start(request.environment)
            except WorkflowAlreadyStartedError:
                branch = request.environment.branch
                return RemovalReport(outcome="already_gone", message=f"`{branch}` was already removed.")
        return await handle.execute_update("destroy_and_report", request.request, result_type=RemovalReport)

    @activity.defn
    async def set_up_again(self, environment: EnvironmentRef) -> str:
        """`/worktree setup`: the environment's workflow runs its set-up again; its state afterwards."""
        handle = self.client.get_workflow_handle(environment_workflow_id(environment.environment_id))
        return await handle.execute_update("set_up_again", result_type=str)

    @activity.defn
    async def wake_environment(self, environment: EnvironmentRef) -> RestoredWorktree:
        """A hibernated environment's worktree back from its archive; a refusal is the user's to hear."""
        handle = self.client.get_workflow_handle(environment_workflow_id(environment.environment_id))
        try:
            woken = await handle.execute_update("wake", result_type=RestoredWorktree)
        except RPCError as error:
            if error.status != RPCStatusCode.NOT_FOUND:
                raise
            woken = RestoredWorktree("refused", f"`{environment.branch}` has no workflow to wake it.")
        if woken.outcome == "refused":
            raise ApplicationError(woken.message, type=RESTORE_REFUSED, non_retryable=True)
        return woken

    @activity.defn
    async def ask_pull_request(self, ask: PullRequestAsk) -> Delivery:
        """`/pr`: the environment's workflow pushes its branch and opens the PR between runs; the update's
        id is the asking message's, so a retried ask is answered once."""
        handle = self.client.get_workflow_handle(environment_workflow_id(ask.environment_id))
        try:
            return await handle.execute_update("open_pull_request", ask, id=f"pr:{ask.key}", result_type=Delivery)
        except RPCError as error:
            if error.status != RPCStatusCode.NOT_FOUND:
                raise
            return Delivery("off", "This worktree has no workflow any more; send a message to start again.")

    @activity.defn
    async def wait_for_setup(self, environment_id: str) -> str:
        """Until the environment's set-up is no longer running; its state then."""
        handle = self.client.get_workflow_handle(environment_workflow_id(environment_id))
        try:
            return await handle.execute_update("setup_finished", result_type=str)
        except RPCError as error:
            if error.status != RPCStatusCode.NOT_FOUND:
                raise
            return "none"  # no workflow (it ended): nothing is running

    async def _start(self, environment: EnvironmentRef, setup: RepositorySetup | None = None, **signal: object) -> None:
        attributes = TypedSearchAttributes([
            SearchAttributePair(search_attributes.CODEBASE, environment.codebase.name),
            SearchAttributePair(search_attributes.BRANCH, environment.branch),
            SearchAttributePair(search_attributes.WORKFLOW_TYPE, environment.workflow_type),
            SearchAttributePair(search_attributes.WORKFLOW_ID, environment.workflow_id),
            SearchAttributePair(search_attributes.STATUS, "active"),
        ])
        await self.client.start_workflow(
            ENVIRONMENT_WORKFLOW,
            EnvironmentState(environment=environment, setup=setup),
            id=environment_workflow_id(environment.environment_id),
            task_queue=self.task_queue,
            id_reuse_policy=_REUSE,
            # A task handed to a worker that died as it was polling (Temporal still counts its poll) is
            # given to another after this, not the default 10 s: a failover within seconds.
            task_timeout=ENVIRONMENT_TASK_TIMEOUT,
            search_attributes=attributes,
            # What the Temporal UI lists it as; its messages' pages link here (workflows/links.py).
            static_summary=f"worktree `{environment.branch}` of {environment.codebase.name}",
            static_details=f"Path: {environment.working_path}\n\nFor {environment.workflow_type} `{environment.workflow_id}`",
            **signal,  # type: ignore[arg-type]
        )

    async def _signal(self, environment_id: str, name: str, signal: ConversationSignal) -> None:
        handle = self.client.get_workflow_handle(environment_workflow_id(environment_id))
        try:
            await handle.signal(name, signal)
        except RPCError as error:
            if error.status != RPCStatusCode.NOT_FOUND:
                raise
            activity.logger.info("environment %s has no running workflow; %s ignored", environment_id, name)

    async def _is_running(self, handle: WorkflowHandle) -> bool:
        try:
            return (await handle.describe()).status == WorkflowExecutionStatus.RUNNING
        except RPCError as error:
            if error.status != RPCStatusCode.NOT_FOUND:
                raise
            return False


async def retried_removal(client: Client, environment_id: str) -> str | None:
    """Why the service's own removal of the environment was refused, while its workflow tries it again
    every hour; None otherwise, or when the workflow did not answer in time. Its IsolatorStatus is read
    first (no replay), its state only when it says `removal_refused`."""
    handle = client.get_workflow_handle(environment_workflow_id(environment_id))
    wait = timedelta(seconds=ASK_SECONDS)
    try:
        described = await handle.describe(rpc_timeout=wait)
        if described.typed_search_attributes.get(search_attributes.STATUS) != "removal_refused":
            return None
        state = await handle.query("state", result_type=EnvironmentState, rpc_timeout=wait)
    except (RPCError, WorkflowQueryFailedError, WorkflowQueryRejectedError) as error:
        activity.logger.info("environment %s was not asked about its removal: %s", environment_id, error)
        return None
    return state.refusal if state.status == "removal_refused" and state.retrying is not None else None
