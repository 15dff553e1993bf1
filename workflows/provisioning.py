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
    from activities.contracts import (
        AttachInput,
        Codebase,
        Conversation,
        Environment,
        RecordEnvironmentInput,
        WorktreeReady,
        WorktreeRequest,
    )
    from activities.lifecycle_contracts import (
        LIMIT_REACHED,
        AttachRequest,
        CodebaseCleanupInput,
        ConversationSignal,
        EnvironmentCount,
        EnvironmentRef,
        conversation_key,
    )
    from workflows import lifecycle_steps, steps, worktree_texts
    from workflows.cleanup import CodebaseCleanupWorkflow, view_codebase
    from workflows.contracts import MessageInput, Outcome, Resolution
    from workflows.errors import STEP_FAILURES, answer, failure_cause

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
        attached = await steps.attach_conversation(
            AttachInput(self.conversation.row_id, environment.id, environment.working_path, key=self.key)
        )
        if attached.changed:
            await self._announce(environment, text)
        return resolved(outcome, environment)

    async def adopt(self, workflow_type: str, workflow_id: str, path: str, branch: str, text: str) -> Resolution:
        """A worktree already on disk is recorded as it is; nothing is created, so no limit applies."""
        recorded = await steps.record_environment(
            self._record(workflow_type, workflow_id, path, branch, {"adopted": True}, counts=False)
        )
        if recorded.attachment_changed:
            await self._announce(recorded.environment, text)
        return resolved("adopted" if recorded.created else "attached", recorded.environment)

    async def create(
        self, workflow_type: str, workflow_id: str, request: WorktreeRequest, announce: Callable[[WorktreeReady], str],
        count: EnvironmentCount | None = None,
    ) -> Resolution:
        """`count`: the codebase's environments, when the caller has just counted them."""
        if not await self._make_room(count):
            return Resolution(outcome="limit")
        worktree = await steps.create_worktree(request, locally=steps.uses_local_steps())
        metadata = {"start_commit": worktree.fresh_from} if worktree.fresh_from else {}
        try:
            recorded = await steps.record_environment(
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
            await self._announce(recorded.environment, announce(worktree))
        return resolved("created" if recorded.created else "attached", recorded.environment)

    async def _announce(self, environment: Environment, text: str) -> None:
        """Tell the environment's workflow, and the user, that the conversation works there."""
        if steps.uses_local_steps():
            # Both are local activities: side by side, in the same workflow task. Both are waited
            # for before a failure is raised: a workflow may not end with a local activity running.
            outcomes = await asyncio.gather(self.tell_environment(environment), self.reply(text),
                                            return_exceptions=True)
            for outcome in outcomes:
                answer(outcome)
        else:
            await self.tell_environment(environment)
            await self.reply(text)

    async def tell_environment(self, environment: Environment) -> None:
        previous = self.conversation.environment
        await lifecycle_steps.attach_environment(AttachRequest(
            environment=environment_ref(environment, self.codebase, self.message.platform),
            signal=ConversationSignal(
                conversation_key(self.message.platform, self.message.conversation_id),
                key=f"{workflow.info().workflow_id}:attach",
            ),
            previous_environment_id=previous.id if previous is not None else None,
        ))

    async def _make_room(self, count: EnvironmentCount | None) -> bool:
        """At the limit, merged environments nobody uses go first; still full, the user is told why."""
        if steps.create_path_v2_or_later():
            count = count or await steps.count_environments(self.codebase.id)
            active, limit = count.active, count.limit
        else:
            listing = await lifecycle_steps.list_environments(self.codebase.id)
            active, limit = len(listing.environments), listing.limit
        if active < limit:
            return True
        wfid = workflow.info().workflow_id
        report = await workflow.execute_child_workflow(
            CodebaseCleanupWorkflow.run, CodebaseCleanupInput(self.codebase, ["merged"], key=wfid),
            id=f"{wfid}:make-room",
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
            await lifecycle_steps.remove_worktree(ref, force=False)

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
