"""RestoreEnvironmentWorkflow: a removed environment's worktree back from its archive, on its branch,
with its uncommitted and untracked files; or a hibernated one woken. `/worktree restore` runs it as
a child of the message, `POST /api/environments/{id}/restore` starts it.

A removed environment's workflow ended for good, so the restored worktree is a new environment with
the old one's identity, path and branch; the old row names it (`restored_as`).
"""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from isolator.contracts.archive import (
        BringBackInput,
        RecordBroughtBackInput,
        RecordRestoredInput,
        RemovedEnvironment,
        RestoreReport,
        RestoreRequest,
    )
    from isolator.contracts.environment import (
        AttachInput,
        AttachRequest,
        ConversationSignal,
        Environment,
        EnvironmentRef,
        conversation_key,
    )
    from isolator.contracts.worktree import RestoreWorktreeInput
    from workflows.chat import archive_texts
    from workflows.errors import STEP_FAILURES, user_error
    from workflows.provisioning import environment_ref
    from workflows.steps import versions
    from workflows.steps.environments import (
        archives,
        signals as environment_signals,
        records as environments,
        isolation,
    )


@workflow.defn
class RestoreEnvironmentWorkflow:
    @workflow.run
    async def run(self, request: RestoreRequest) -> RestoreReport:
        self._request = request
        removed = await archives.find_removed_environment(request.environment_id)
        if removed is None:
            return RestoreReport("not_found", archive_texts.not_restorable(request.environment_id))
        if removed.status == "hibernated":
            return await self._wake(removed)
        if removed.restored_as is not None:
            return RestoreReport("already_restored", archive_texts.already_restored(removed.branch),
                                 removed.restored_as, removed.working_path, removed.branch)
        if removed.conflict is not None:
            if removed.holder_status == "active" and removed.holder_branch == removed.branch \
                    and versions.brings_archives_into_active_worktrees():
                return await self._bring_back(removed)
            return RestoreReport("refused", archive_texts.taken(removed))
        count = await environments.count_environments(removed.codebase.id)
        if count.active >= count.limit:
            return RestoreReport("limit", archive_texts.at_limit(removed.codebase.name, count.active, count.limit))
        restored = await isolation.restore_worktree(RestoreWorktreeInput(
            removed.codebase, removed.working_path, removed.branch, removed.archive_ref, removed.branch_tip,
            removed.provider,
        ))
        if restored.outcome == "refused":
            return RestoreReport("refused", restored.message)
        environment = await archives.record_restored_environment(
            RecordRestoredInput(removed.id, workflow.info().workflow_id, request.conversation_row_id)
        )
        await environment_signals.attach_environment(AttachRequest(
            self._ref(environment, removed), self._signal(), request.previous_environment_id, restored.setup,
        ))
        return RestoreReport("restored", archive_texts.restored(removed, request.conversation_row_id is not None),
                             environment.id, environment.working_path, environment.branch_name)

    async def _bring_back(self, removed: RemovedEnvironment) -> RestoreReport:
        """Its branch works in another worktree again (made by the next message after a forced removal):
        the archived files go in there when it has no changes of its own, else they stay in the archive
        and the user is told how to apply them."""
        assert removed.holder_id is not None and removed.holder_path is not None
        details = await environments.environment_details(removed.holder_id)
        if details.running is not None or details.queued:
            return RestoreReport("kept", archive_texts.kept(removed, "the agent is working there"))
        brought = await archives.bring_archive_into_worktree(BringBackInput(
            removed.codebase, removed.archive_ref, removed.branch, removed.holder_path))
        if brought.outcome == "gone":
            return RestoreReport("not_found", archive_texts.not_restorable(removed.id))
        if brought.outcome == "kept":
            return RestoreReport("kept", archive_texts.kept(removed, brought.reason))
        await archives.record_brought_back(RecordBroughtBackInput(removed.id, removed.holder_id))
        return RestoreReport("brought_back", archive_texts.brought_back(removed), removed.holder_id,
                             removed.holder_path, removed.branch)

    async def _wake(self, removed: RemovedEnvironment) -> RestoreReport:
        ref = _hibernated_ref(removed)
        try:
            await environment_signals.wake_environment(ref)
        except STEP_FAILURES as error:
            return RestoreReport("refused", user_error(error))
        if self._request.conversation_row_id is not None:
            await environments.attach_conversation(AttachInput(
                self._request.conversation_row_id, removed.id, removed.working_path, key=workflow.info().workflow_id,
            ))
            await environment_signals.attach_environment(AttachRequest(
                ref, self._signal(), self._request.previous_environment_id,
            ))
        return RestoreReport("woken", archive_texts.woken(removed), removed.id, removed.working_path, removed.branch)

    def _signal(self) -> ConversationSignal | None:
        if self._request.platform is None or self._request.conversation_id is None:
            return None
        return ConversationSignal(conversation_key(self._request.platform, self._request.conversation_id),
                                  key=f"{workflow.info().workflow_id}:attach")

    def _ref(self, environment: Environment, removed: RemovedEnvironment) -> EnvironmentRef:
        return environment_ref(environment, removed.codebase, self._request.platform)


def _hibernated_ref(removed: RemovedEnvironment) -> EnvironmentRef:
    return EnvironmentRef(removed.id, removed.codebase, removed.working_path, removed.branch, removed.workflow_type,
                          removed.workflow_id, provider=removed.provider, from_fork=removed.from_fork)
