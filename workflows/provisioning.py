"""Putting a conversation into an environment: attaching to one, adopting one, or creating one within
the codebase's limit. The message path and `/worktree create` both go through here.

Every attachment is also told to the environment's workflow (started on first attach), so that
close events and removals know who still uses the worktree.
"""

from __future__ import annotations

import asyncio
from typing import Awaitable, Callable

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from isolator.contracts.cleanup import CodebaseCleanupInput
    from isolator.contracts.codebase import Codebase
    from isolator.contracts.environment import (
        AttachInput,
        AttachRequest,
        ConversationSignal,
        Environment,
        EnvironmentCount,
        EnvironmentRef,
        RecordEnvironmentInput,
        conversation_key,
    )
    from isolator.contracts.errors import LIMIT_REACHED
    from isolator.contracts.message import (
        Conversation,
        MessageInput,
        Outcome,
        Resolution,
    )
    from isolator.contracts.repository import RepositorySetup
    from isolator.contracts.worktree import Adoptable, WorktreeReady, WorktreeRequest
    from workflows.chat import worktree_texts
    from workflows.cleanup import CodebaseCleanupWorkflow, view_codebase
    from workflows.errors import STEP_FAILURES, failure_cause, result_or_raise
    from workflows.steps import versions
    from workflows.steps.environments import signals as environment_signals, records as environments, isolation
    from workflows.steps.warm import pool as warm_pool

Reply = Callable[[str], Awaitable[None]]


def environment_ref(environment: Environment, codebase: Codebase, platform: str | None = None) -> EnvironmentRef:
    return EnvironmentRef(
        environment_id=environment.id,
        codebase=codebase,
        working_path=environment.working_path,
        branch=environment.branch_name,
        workflow_type=environment.workflow_type,
        workflow_id=environment.workflow_id,
        platform=platform,
        provider=environment.provider,
        from_fork=environment.from_fork,
    )


def resolved(outcome: Outcome, environment: Environment) -> Resolution:
    return Resolution(
        outcome=outcome,
        working_path=environment.working_path,
        branch=environment.branch_name,
        environment_id=environment.id,
    )


class Provisioner:
    def __init__(self, message: MessageInput, conversation: Conversation, codebase: Codebase, reply: Reply) -> None:
        self.message = message
        self.conversation = conversation
        self.codebase = codebase
        self.reply = reply
        self.key = workflow.info().workflow_id  # lets a retry after a crash recognise its own records

    async def attach(self, outcome: Outcome, environment: Environment, text: str) -> Resolution:
        attached = await environments.attach_conversation(
            AttachInput(self.conversation.row_id, environment.id, environment.working_path, key=self.key)
        )
        if attached.changed:
            await self._announce(environment, text)
        return resolved(outcome, environment)

    async def adopt(self, workflow_type: str, workflow_id: str, adoptable: Adoptable, text: str) -> Resolution:
        """A worktree already on disk is recorded as it is; nothing is created, so no limit applies."""
        recorded = await environments.record_environment(
            self._record(workflow_type, workflow_id, adoptable.path, adoptable.branch, {"adopted": True}, counts=False)
        )
        if recorded.attachment_changed:
            await self._announce(recorded.environment, text)
        return resolved("adopted" if recorded.created else "attached", recorded.environment)

    async def create(
        self, workflow_type: str, workflow_id: str, request: WorktreeRequest, announce: Callable[[WorktreeReady], str],
    ) -> Resolution:
        """Create and record the worktree; `make_room` has said there is room."""
        worktree = await warm_pool.claim_or_create(request, locally=versions.uses_local_steps())
        metadata = {"start_commit": worktree.fresh_from} if worktree.fresh_from else {}
        if worktree.warm:
            metadata["warm"] = True  # counted as a warm claim (api/metrics_state.py)
        if request.source == "pr_fork":
            metadata["from_fork"] = True  # its set-up runs only when the repository trusts forks
        try:
            recorded = await environments.record_environment(
                self._record(workflow_type, workflow_id, worktree.path, worktree.branch, metadata, counts=True)
            )
        except STEP_FAILURES as error:
            if not _is_limit(error):
                raise
            # Concurrent messages took the last places between our count and our record.
            await self._undo(worktree)
            await self.reply(await self._limit_text())
            return Resolution(outcome="limit")
        # Only the message that attached the conversation says so; concurrent ones stay silent.
        if recorded.attachment_changed:
            await self._announce(recorded.environment, announce(worktree), worktree.setup)
        return resolved("created" if recorded.created else "attached", recorded.environment)

    async def _announce(self, environment: Environment, text: str, setup: RepositorySetup | None = None) -> None:
        """Tell the environment's workflow, and the user, that the conversation works there."""
        if versions.uses_local_steps():
            # Both are local activities: side by side, in the same workflow task. Both are waited
            # for before a failure is raised: a workflow may not end with a local activity running.
            outcomes = await asyncio.gather(self.tell_environment(environment, setup), self.reply(text),
                                            return_exceptions=True)
            for outcome in outcomes:
                result_or_raise(outcome)
        else:
            await self.tell_environment(environment, setup)
            await self.reply(text)

    async def tell_environment(self, environment: Environment, setup: RepositorySetup | None = None) -> None:
        previous = self.conversation.environment
        await environment_signals.attach_environment(AttachRequest(
            environment=environment_ref(environment, self.codebase, self.message.platform),
            signal=ConversationSignal(
                conversation_key(self.message.platform, self.message.conversation_id),
                key=f"{workflow.info().workflow_id}:attach",
            ),
            previous_environment_id=previous.id if previous is not None else None,
            setup=setup,
        ))

    async def make_room(self, count: EnvironmentCount) -> bool:
        """The limit step. At the limit, merged environments nobody uses go first; still full, the user
        is told why and nothing is created."""
        active, limit = count.active, count.limit
        if active < limit:
            return True
        wfid = workflow.info().workflow_id
        report = await workflow.execute_child_workflow(
            CodebaseCleanupWorkflow.run, CodebaseCleanupInput(self.codebase, ["merged"], key=wfid),
            id=f"{wfid}:make-room",
            static_summary=f"making room in {self.codebase.name}: removing merged worktrees",
        )
        if report.removed:
            await self.reply(worktree_texts.made_room(len(report.removed)))
        if active - len(report.removed) < limit:
            return True
        await self.reply(await self._limit_text())
        return False

    async def _limit_text(self) -> str:
        view = await view_codebase(self.codebase)
        return worktree_texts.limit_reached(self.codebase.name, view.counts, view.listing.stale_threshold_days)

    async def _undo(self, worktree: WorktreeReady) -> None:
        if worktree.created:
            ref = EnvironmentRef("", self.codebase, worktree.path, worktree.branch, "", "")
            await isolation.remove_worktree(ref, force=False)

    def _record(
        self, workflow_type: str, workflow_id: str, path: str, branch: str, metadata: dict, counts: bool
    ) -> RecordEnvironmentInput:
        return RecordEnvironmentInput(
            conversation_row_id=self.conversation.row_id,
            codebase_id=self.codebase.id,
            workflow_type=workflow_type,
            workflow_id=workflow_id,
            working_path=path,
            branch_name=branch,
            platform=self.message.platform,
            metadata=metadata,
            counts_against_limit=counts,
            key=self.key,
        )


def _is_limit(error: BaseException) -> bool:
    cause = failure_cause(error)
    return isinstance(cause, ApplicationError) and cause.type == LIMIT_REACHED
