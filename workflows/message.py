"""MessageWorkflow: one per incoming message; decides which worktree the work happens in."""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, ChildWorkflowError

with workflow.unsafe.imports_passed_through():
    from activities.contracts import (
        USER_ERRORS,
        AttachInput,
        Codebase,
        Conversation,
        ConversationInput,
        Environment,
        IdentityQuery,
        LinkCodebaseInput,
        RecordEnvironmentInput,
        ReplyInput,
        RepositorySource,
        RetireInput,
        WorktreeRequest,
    )
    from activities.repositories import is_clone_url, looks_like_path
    from workflows import search_attributes, steps, texts
    from workflows.codebase import RegisterCodebaseWorkflow
    from workflows.commands import Command, parse_command
    from workflows.contracts import IsolationHints, MessageInput, Resolution
    from workflows.naming import branch_for


@workflow.defn
class MessageWorkflow:
    def __init__(self) -> None:
        self._replies: list[str] = []

    @workflow.run
    async def run(self, message: MessageInput) -> Resolution:
        self._message = message
        conversation = await steps.record_conversation(ConversationInput(message.platform, message.conversation_id))
        command = parse_command(message.text)
        if command is not None:
            await self._answer(command, conversation)
            return self._finish(Resolution(outcome="command"), conversation.codebase)
        if conversation.codebase is None:
            await self._reply(texts.no_codebase(conversation.codebase_choices))
            return self._finish(Resolution(outcome="no_codebase"), None)
        try:
            resolution = await self._resolve_isolation(conversation, conversation.codebase)
        except ActivityError as error:
            await self._reply(texts.failed(_user_error(error)))
            resolution = Resolution(outcome="failed")
        return self._finish(resolution, conversation.codebase)

    async def _resolve_isolation(self, conversation: Conversation, codebase: Codebase) -> Resolution:
        """The decision order: validate, reuse by identity, create."""
        hints = self._message.hints or IsolationHints()
        workflow_type = hints.workflow_type
        workflow_id = hints.workflow_id or conversation.conversation_id

        current = conversation.environment
        if current is not None:
            if current.status == "active" and await self._is_healthy(current, codebase):
                return _resolved("reused", current)
            await self._retire(current, conversation)

        existing = await steps.find_environment_by_identity(IdentityQuery(codebase.id, workflow_type, workflow_id))
        if existing is not None:
            if await self._is_healthy(existing, codebase):
                attached = await steps.attach_conversation(
                    AttachInput(conversation.row_id, existing.id, existing.working_path)
                )
                if attached.changed:
                    await self._reply(texts.working_in(existing.branch_name))
                return _resolved("attached", existing)
            await self._retire(existing, conversation)

        branch = branch_for(workflow_type, workflow_id)
        worktree = await steps.create_worktree(WorktreeRequest(codebase=codebase, branch=branch))
        recorded = await steps.record_environment(
            RecordEnvironmentInput(
                conversation_row_id=conversation.row_id,
                codebase_id=codebase.id,
                workflow_type=workflow_type,
                workflow_id=workflow_id,
                working_path=worktree.path,
                branch_name=worktree.branch,
                platform=self._message.platform,
            )
        )
        # Only the message that attached the conversation says so; concurrent ones stay silent.
        if recorded.attachment_changed:
            await self._reply(texts.working_in(recorded.environment.branch_name))
        return _resolved("created" if recorded.created else "attached", recorded.environment)

    async def _is_healthy(self, environment: Environment, codebase: Codebase) -> bool:
        return (await steps.validate_environment(environment, codebase.host)).status == "healthy"

    async def _retire(self, environment: Environment, conversation: Conversation) -> None:
        """The worktree is gone: mark the environment destroyed and tell the user, once."""
        retired = await steps.retire_environment(RetireInput(environment.id, conversation.row_id))
        if retired.marked_now:
            await self._reply(texts.worktree_gone(environment.working_path, environment.branch_name))

    async def _answer(self, command: Command, conversation: Conversation) -> None:
        if command.name == "help":
            await self._reply(texts.HELP)
        elif command.name == "status":
            environment = conversation.environment if conversation.environment and conversation.environment.status == "active" else None
            await self._reply(
                texts.status(
                    conversation.codebase.name if conversation.codebase else None,
                    conversation.cwd,
                    environment.working_path if environment else None,
                    environment.branch_name if environment else None,
                )
            )
        elif command.name == "clone":
            await self._clone(command, conversation)
        else:
            await self._reply(texts.UNKNOWN_COMMAND)

    async def _clone(self, command: Command, conversation: Conversation) -> None:
        target = command.args[0] if len(command.args) == 1 else ""
        if looks_like_path(target):
            source = RepositorySource(host=self._message.default_host, path=target)
        elif is_clone_url(target):
            source = RepositorySource(host=self._message.default_host, url=target)
        else:
            await self._reply(texts.CLONE_USAGE)
            return
        try:
            registered = await workflow.execute_child_workflow(
                RegisterCodebaseWorkflow.run, source, id=f"{workflow.info().workflow_id}:clone"
            )
        except ChildWorkflowError as error:
            await self._reply(f"Could not register `{target}`: {_user_error(error)}\n{texts.CLONE_USAGE}")
            return
        await steps.link_conversation_codebase(LinkCodebaseInput(conversation.row_id, registered.codebase.id))
        await self._reply(
            texts.codebase_linked(registered.codebase.name, registered.codebase.canonical_path, registered.created)
        )

    async def _reply(self, text: str) -> None:
        key = f"{workflow.info().workflow_id}:{len(self._replies)}"
        self._replies.append(text)
        await steps.send_reply(ReplyInput(self._message.platform, self._message.conversation_id, text, key))

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


def _resolved(outcome: str, environment: Environment) -> Resolution:
    return Resolution(
        outcome=outcome,  # type: ignore[arg-type]
        working_path=environment.working_path,
        branch=environment.branch_name,
        environment_id=environment.id,
    )


def _user_error(error: Exception) -> str:
    """The reason to show the user, or re-raise: only known user errors end the message quietly."""
    cause = error.cause if isinstance(error, (ActivityError, ChildWorkflowError)) else None
    if isinstance(cause, ApplicationError) and cause.type in USER_ERRORS:
        return cause.message
    raise error
