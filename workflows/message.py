"""MessageWorkflow: one per incoming message; decides which worktree the work happens in."""

from __future__ import annotations

import asyncio

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from activities.contracts import (
        AdoptQuery,
        CloseInput,
        Codebase,
        CompleteHintsInput,
        Conversation,
        ConversationInput,
        Environment,
        IdentityQuery,
        IsolationHints,
        LinkCodebaseInput,
        ReplyInput,
        RepositorySource,
        RetireInput,
        WorktreeReady,
        WorktreeRequest,
    )
    from activities.lifecycle_contracts import (
        ConversationSignal,
        DestroyEnvironmentInput,
        DestroyRequest,
        EnvironmentCount,
        SignalRequest,
        conversation_key,
    )
    from workflows import lifecycle_steps, search_attributes, steps, texts
    from workflows.codebase import RegisterCodebaseWorkflow
    from workflows.command_handlers import answer_command
    from workflows.commands import parse_command
    from workflows.contracts import MessageInput, Resolution
    from workflows.errors import STEP_FAILURES, answer, user_error
    from workflows.naming import branch_for
    from workflows.provisioning import Provisioner, environment_ref, resolved


@workflow.defn
class MessageWorkflow:
    def __init__(self) -> None:
        self._replies: list[str] = []

    @workflow.run
    async def run(self, message: MessageInput) -> Resolution:
        self._message = message
        hints = message.hints or IsolationHints()
        if message.kind == "closed":
            await self._close(message)
            return self._finish(Resolution(outcome="closed"), None)
        conversation = await steps.record_conversation(
            ConversationInput(message.platform, message.conversation_id, hints.repository_url)
        )
        command = parse_command(message.text)
        if command is not None:
            await answer_command(command, conversation, message, self._reply)
            return self._finish(Resolution(outcome="command"), conversation.codebase)
        try:
            codebase = conversation.codebase or await self._register_event_repository(conversation, hints)
            if codebase is None:
                await self._reply(texts.no_codebase(conversation.codebase_choices))
                return self._finish(Resolution(outcome="no_codebase"), None)
            resolution = await self._resolve_isolation(conversation, codebase, hints)
        except STEP_FAILURES as error:
            await self._reply(texts.failed(user_error(error)))
            return self._finish(Resolution(outcome="failed"), conversation.codebase)
        return self._finish(resolution, codebase)

    async def _resolve_isolation(self, conversation: Conversation, codebase: Codebase, hints: IsolationHints) -> Resolution:
        """The decision order: validate, reuse by identity, share, adopt, limit, create."""
        provision = Provisioner(self._message, conversation, codebase, self._reply)
        current = conversation.environment
        # Attached by this very message in an attempt whose answer a crash lost: finish that work instead.
        mine = conversation.attached_by == workflow.info().workflow_id
        if current is not None and not mine:
            if current.status == "active" and await self._is_healthy(current, codebase):
                return resolved("reused", current)
            await self._retire(current, conversation, codebase)

        if hints.needs_completion:
            hints = await steps.complete_hints(
                CompleteHintsInput(self._message.platform, self._message.conversation_id, hints)
            )
        workflow_type = hints.workflow_type
        workflow_id = hints.workflow_id or conversation.conversation_id

        identity = IdentityQuery(codebase.id, workflow_type, workflow_id)
        request = _worktree_request(codebase, workflow_type, workflow_id, hints)
        adoption = AdoptQuery(codebase, request.branch, hints.pr_head_branch if workflow_type == "pr" else None)
        count: EnvironmentCount | BaseException | None = None
        asked_together = steps.create_path_v2_or_later()
        if asked_together:
            # The lookups of reuse by identity, adopt and limit need nothing from each other: asked
            # at once (one wait instead of three), their answers are taken in the decision order, and
            # a lookup's failure counts only once its step is reached.
            found, adoption_search, count = await asyncio.gather(
                steps.find_environment_by_identity(identity),
                steps.find_adoptable_worktree(adoption),
                steps.count_environments(codebase.id),
                return_exceptions=True,
            )
            existing = answer(found)
        else:  # runs started before this asked each lookup when its step came
            existing = await steps.find_environment_by_identity(identity)
        if existing is not None:
            if await self._is_healthy(existing, codebase):
                return await provision.attach("attached", existing, texts.working_in(existing.branch_name))
            await self._retire(existing, conversation, codebase)
            count = None  # one fewer now: counted again if it comes to that

        for issue in hints.linked_issues:
            linked = await steps.find_environment_by_identity(IdentityQuery(codebase.id, "issue", issue))
            if linked is not None and await self._is_healthy(linked, codebase):
                return await provision.attach("shared", linked, texts.sharing_with_issue(issue))

        adoptable = answer(adoption_search) if asked_together else await steps.find_adoptable_worktree(adoption)
        if adoptable is not None:
            return await provision.adopt(workflow_type, workflow_id, adoptable.path, adoptable.branch,
                                         texts.adopted(adoptable.path, adoptable.branch))

        def announce(worktree: WorktreeReady) -> str:
            if workflow_type == "pr" and hints.pr_head_sha:
                # The branch the work happens on: the PR's own, or `pr-N-review` for a fork.
                return texts.reviewing_pr(hints.pr_head_sha, worktree.branch)
            return texts.working_in(worktree.branch)

        return await provision.create(workflow_type, workflow_id, request, announce, answer(count))

    async def _close(self, message: MessageInput) -> None:
        """Record the close and tell the environment: it goes when its last conversation is closed."""
        environment_id = await steps.close_conversation(CloseInput(message.platform, message.conversation_id))
        if environment_id is not None:
            await lifecycle_steps.signal_environment(SignalRequest(
                environment_id, "conversation_closed",
                ConversationSignal(conversation_key(message.platform, message.conversation_id),
                                   key=workflow.info().workflow_id),
            ))

    async def _register_event_repository(self, conversation: Conversation, hints: IsolationHints) -> Codebase | None:
        """An event from a repository nobody registered: clone it into the workspace and use it."""
        if not hints.clone_url:
            return None
        source = RepositorySource(host=self._message.default_host, url=hints.clone_url)
        registered = await workflow.execute_child_workflow(
            RegisterCodebaseWorkflow.run, source, id=f"{workflow.info().workflow_id}:register"
        )
        await steps.link_conversation_codebase(LinkCodebaseInput(conversation.row_id, registered.codebase.id))
        return registered.codebase

    async def _is_healthy(self, environment: Environment, codebase: Codebase) -> bool:
        return (await steps.validate_environment(environment, codebase.host)).status == "healthy"

    async def _retire(self, environment: Environment, conversation: Conversation, codebase: Codebase) -> None:
        """The worktree is gone: mark the environment destroyed, end its workflow and tell the user, once."""
        retired = await steps.retire_environment(RetireInput(environment.id, conversation.row_id))
        if retired.marked_now:
            await lifecycle_steps.destroy_environment(DestroyEnvironmentInput(
                environment_ref(environment, codebase),
                DestroyRequest(force=False, reason="path gone", key=f"{workflow.info().workflow_id}:retire"),
            ))
            await self._reply(texts.worktree_gone(environment.working_path, environment.branch_name))

    async def _reply(self, text: str) -> None:
        key = f"{workflow.info().workflow_id}:{len(self._replies)}"
        self._replies.append(text)
        reply = ReplyInput(self._message.platform, self._message.conversation_id, text, key)
        await steps.send_reply(reply, locally=steps.uses_local_steps())

    def _finish(self, resolution: Resolution, codebase: Codebase | None) -> Resolution:
        resolution.replies = list(self._replies)
        attributes = [search_attributes.OUTCOME.value_set(resolution.outcome)]
        if codebase is not None:
            attributes.append(search_attributes.CODEBASE.value_set(codebase.name))
        if resolution.branch:
            attributes.append(search_attributes.BRANCH.value_set(resolution.branch))
        workflow.upsert_search_attributes(attributes)
        where = f" `{resolution.branch}` at {resolution.working_path}" if resolution.branch else ""
        workflow.set_current_details(f"Outcome: {resolution.outcome}{where}")
        return resolution


def _worktree_request(codebase: Codebase, workflow_type: str, workflow_id: str, hints: IsolationHints) -> WorktreeRequest:
    """What to create: a PR is checked out on its own branch, or at its head SHA when from a fork."""
    if workflow_type == "pr" and hints.pr_is_fork:
        return WorktreeRequest(codebase, f"pr-{workflow_id}-review", source="pr_fork", pr_number=workflow_id,
                               head_sha=hints.pr_head_sha)
    if workflow_type == "pr" and hints.pr_head_branch:
        return WorktreeRequest(codebase, hints.pr_head_branch, source="pr_branch", pr_number=workflow_id,
                               head_sha=hints.pr_head_sha)
    if workflow_type == "pr":  # the platform could not say which branch: review on a branch of our own
        return WorktreeRequest(codebase, branch_for("review", workflow_id))
    return WorktreeRequest(codebase, branch_for(workflow_type, workflow_id))

