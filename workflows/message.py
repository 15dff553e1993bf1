"""MessageWorkflow: one per incoming message; decides which worktree the work happens in."""

from __future__ import annotations

from dataclasses import replace

from temporalio import workflow
from temporalio.exceptions import ApplicationError

with workflow.unsafe.imports_passed_through():
    from isolator.contracts import search_attributes
    from isolator.contracts.agent import QueueRunInput, no_agent_key, setup_failed_key
    from isolator.contracts.archive import RestoreRequest
    from isolator.contracts.codebase import Codebase, RepositorySource
    from isolator.contracts.environment import (
        ConversationSignal,
        DestroyEnvironmentInput,
        DestroyRequest,
        Environment,
        RetireInput,
        SignalRequest,
        conversation_key,
    )
    from isolator.contracts.message import (
        CloseInput,
        CompleteHintsInput,
        Conversation,
        ConversationInput,
        IsolationHints,
        LinkCodebaseInput,
        MessageInput,
        ReplyInput,
        Resolution,
    )
    from isolator.contracts.trust import Admission, RefusalReplyInput
    from isolator.contracts.worktree import Adoptable
    from workflows import links
    from workflows.chat import agent_texts, texts
    from workflows.chat.commands import Command, finds_worktree_first, parse_command, run_command
    from workflows.codebase import RegisterCodebaseWorkflow
    from workflows.errors import STEP_FAILURES, user_error
    from workflows.host_wait import HostGate
    from workflows.lookups import Work, linked_issue_environment, look_up, recorded_by_this_message, work_of
    from workflows.provisioning import Provisioner, environment_ref, resolved
    from workflows.restore import RestoreEnvironmentWorkflow
    from workflows.steps import versions
    from workflows.steps.chat import conversations, platforms, refusals, replies
    from workflows.steps.environments import archives, isolation, records as environments, \
        signals as environment_signals
    from workflows.steps.runs import queue as agent_runs


# The outcomes that leave the message in an environment: the agent works on it there.
WORK_OUTCOMES = ("reused", "attached", "shared", "adopted", "created", "restored")


@workflow.defn
class MessageWorkflow:
    def __init__(self) -> None:
        self._replies: list[str] = []
        self._codebase: Codebase | None = None  # the codebase the message concerns, once known
        self._command: Command | None = None  # the chat command the message is, if it is one
        self._host = HostGate(self._reply)  # the codebase's host, when it is another: does it answer?

    @workflow.run
    async def run(self, message: MessageInput) -> Resolution:
        self._message = message
        if message.admission is not None and message.admission.refused is not None:
            return self._finish(await self._refuse(message.admission))
        hints = message.hints or IsolationHints()
        try:
            resolution = await self._resolve_isolation(message, hints)
            if self._command is not None:
                resolution = await self._run_command(self._command, resolution, hints)
            elif resolution.outcome in WORK_OUTCOMES and message.kind == "message" and versions.hands_messages_to_agent():
                await self._hand_to_agent(resolution)
        except STEP_FAILURES as error:
            await self._reply(texts.failed(user_error(error)))  # a fault is raised again: retried, seen in the UI
            resolution = Resolution(outcome="failed")
        return self._finish(resolution)

    async def _resolve_isolation(self, message: MessageInput, hints: IsolationHints) -> Resolution:
        """The decision order, top to bottom: a close, a command, the codebase; then validate, reuse
        by identity, return to the work's archived worktree, share, adopt, limit, create.

        A command is run after this (`_run_command`). One that acts on the worktree, in a conversation
        that has none yet, has it looked up by the same order, which stops before anything is made."""
        if message.kind == "closed":
            return await self._close(message)
        conversation = await self._record(message, hints)
        if (command := parse_command(message.text)) is not None:
            self._command = command
            if not finds_worktree_first(command, conversation):
                return Resolution(outcome="command")
        if (codebase := await self._codebase_of(conversation, hints)) is None:
            await self._reply(texts.no_codebase(conversation.codebase_choices))
            return Resolution(outcome="no_codebase")
        if (waited := await self._host.wait(conversation, codebase, self._command)) is not None:
            return waited
        provision = Provisioner(message, conversation, codebase, self._reply)
        if (current := await self._usable(_environment_to_validate(conversation), conversation)) is not None:
            return resolved("reused", current)
        work = work_of(conversation, codebase, await self._completed(hints))
        found = await look_up(work)
        if recorded_by_this_message(found.existing):
            return await self._finish_own_record(provision, work, found.existing)
        if (existing := await self._usable(found.existing, conversation)) is not None:
            return await provision.attach("attached", existing, texts.working_in(existing.branch_name))
        if self._command is None and (returned := await self._return_to_archive(work, conversation)) is not None:
            return returned
        if (shared := await linked_issue_environment(codebase, work.hints)) is not None:
            return await provision.attach("shared", shared.environment, texts.sharing_with_issue(shared.issue))
        if (adoptable := await found.adoptable()) is not None:
            return await provision.adopt(work.workflow_type, work.workflow_id, adoptable,
                                         texts.adopted(adoptable.path, adoptable.branch))
        if self._command is not None:  # a command only looks: no worktree is brought back or made for it
            return Resolution(outcome="command")
        if not await provision.make_room(await found.count()):
            return Resolution(outcome="limit")
        return await provision.create(work.workflow_type, work.workflow_id, work.request, work.announcement)

    async def _finish_own_record(self, provision: Provisioner, work: Work, own: Environment) -> Resolution:
        """An earlier attempt of this message recorded `own`: the step that made it runs again. Both are
        idempotent, so they find their own work and say again what a lost attempt said."""
        if own.adopted:
            return await provision.adopt(work.workflow_type, work.workflow_id,
                                         Adoptable(own.working_path, own.branch_name),
                                         texts.adopted(own.working_path, own.branch_name))
        return await provision.create(work.workflow_type, work.workflow_id, work.request, work.announcement)

    async def _run_command(self, command: Command, resolution: Resolution, hints: IsolationHints) -> Resolution:
        """The command, in the conversation as the look-up left it (attached to the worktree it found)."""
        conversation = await self._record(self._message, hints) if resolution.outcome in WORK_OUTCOMES \
            else self._conversation
        await self._host.before_command(command.name, conversation)
        await run_command(command, conversation, self._message, self._reply)
        return replace(resolution, outcome="command")

    async def _refuse(self, admission: Admission) -> Resolution:
        """The platform's allow rule refused the sender: one reply per conversation and hour, nothing else
        (no conversation row, no codebase, no worktree, no run)."""
        assert admission.refused is not None
        if not admission.answered and await refusals.claim_refusal_reply(RefusalReplyInput(
                self._message.platform, self._message.conversation_id, workflow.info().workflow_id)):
            await self._reply(admission.refused)
        return Resolution(outcome="refused")

    async def _return_to_archive(self, work: Work, conversation: Conversation) -> Resolution | None:
        """The work's worktree went when its conversation closed or fell silent: a message for the work
        again (an issue reopened, a thread woken up) brings it back as it was, uncommitted changes included.
        One that cannot come back (its branch moved on) leaves the way to a new worktree."""
        if not versions.returns_to_archives() or (removed := await archives.find_returning_environment(
                work.identity)) is None:
            return None
        current = conversation.environment
        report = await workflow.execute_child_workflow(RestoreEnvironmentWorkflow.run, RestoreRequest(
            removed.id, key=workflow.info().workflow_id, conversation_row_id=conversation.row_id,
            platform=self._message.platform, conversation_id=self._message.conversation_id,
            previous_environment_id=current.id if current is not None else None,
        ), id=f"{workflow.info().workflow_id}:restore",
            static_summary=f"bringing back the archived worktree of {self._message.platform} "
                           f"{self._message.conversation_id}")
        if report.outcome not in ("restored", "already_restored"):
            return None
        if report.outcome == "restored":
            await self._reply(report.message)
        return Resolution("restored", report.working_path, report.branch, report.environment_id)

    async def _hand_to_agent(self, resolution: Resolution) -> None:
        """The coding agent works on the message in its environment, after the runs queued before it."""
        assert self._codebase is not None and resolution.environment_id is not None
        told_first = versions.tells_no_agent_first()
        queued = await agent_runs.queue_agent_run(QueueRunInput(
            resolution.environment_id, self._codebase.id, self._message.platform, self._message.conversation_id,
            self._message.text, workflow.info().workflow_id, answered=bool(self._replies) and not told_first,
            user=self._message.user,
        ))
        resolution.run_id = queued.run_id
        if queued.tell_setup_failed:  # once per worktree and conversation
            await self._reply(agent_texts.after_failed_setup(resolution.branch or ""), key=setup_failed_key(
                resolution.environment_id, self._message.platform, self._message.conversation_id))
        if queued.outcome == "queued" and queued.ahead:
            here = conversation_key(self._message.platform, self._message.conversation_id)
            await self._reply(agent_texts.queued(queued.ahead, queued.waiting_for, here))
        elif queued.outcome == "gone":
            await self._reply(agent_texts.worktree_going())
        elif queued.tell_no_agent and (told_first or not self._replies):
            # A message that would go unanswered says why, once per conversation (its key is the conversation's).
            await self._reply(agent_texts.no_agent(), key=no_agent_key(self._message.platform,
                                                                       self._message.conversation_id))

    async def _close(self, message: MessageInput) -> Resolution:
        """Record the close and tell the environment: it goes when its last conversation is closed."""
        environment_id = await conversations.close_conversation(CloseInput(message.platform, message.conversation_id))
        if environment_id is not None:
            await environment_signals.signal_environment(SignalRequest(
                environment_id, "conversation_closed",
                ConversationSignal(conversation_key(message.platform, message.conversation_id),
                                   key=workflow.info().workflow_id),
            ))
        return Resolution(outcome="closed")

    async def _record(self, message: MessageInput, hints: IsolationHints) -> Conversation:
        conversation = await conversations.record_conversation(
            ConversationInput(message.platform, message.conversation_id, hints.repository_url)
        )
        self._conversation, self._codebase = conversation, conversation.codebase
        return conversation

    async def _codebase_of(self, conversation: Conversation, hints: IsolationHints) -> Codebase | None:
        """The conversation's codebase; for an event from a repository nobody registered, a clone of it."""
        if conversation.codebase is None and hints.clone_url:
            source = RepositorySource(host=self._message.default_host, url=hints.clone_url)
            registered = await workflow.execute_child_workflow(
                RegisterCodebaseWorkflow.run, source, id=f"{workflow.info().workflow_id}:register",
                static_summary=f"registering {hints.clone_url}",
            )
            if registered.codebase is None:  # the user's to fix: answered as a failed registration was
                raise ApplicationError(registered.problem or "the repository could not be registered",
                                       type=registered.problem_type, non_retryable=True)
            await conversations.link_conversation_codebase(LinkCodebaseInput(conversation.row_id, registered.codebase.id))
            self._codebase = registered.codebase
        return self._codebase

    async def _completed(self, hints: IsolationHints) -> IsolationHints:
        """What the webhook did not carry (a PR's head, the issues it closes), asked of the platform."""
        if not hints.needs_completion:
            return hints
        return await platforms.complete_hints(
            CompleteHintsInput(self._message.platform, self._message.conversation_id, hints)
        )

    async def _usable(self, environment: Environment | None, conversation: Conversation) -> Environment | None:
        """The environment if it is active and its worktree healthy (after its set-up, when that is
        running); otherwise it is retired."""
        if environment is None:
            return None
        if environment.status == "hibernated":
            return await self._wake(environment)
        # The conversation's own worktree was checked as it was recorded, when that ran on its host.
        checked = conversation.environment_check if environment is conversation.environment else None
        if environment.status == "active" and await self._is_healthy(environment, checked):
            if environment.setup_state == "running":  # its set-up goes first
                await environment_signals.wait_for_setup(environment.id)
            return environment
        await self._retire(environment, conversation)
        return None

    async def _wake(self, environment: Environment) -> Environment:
        """Hibernated to keep the disk budget: its worktree comes back as it was, the user is told in one
        line, and the message goes on there (its workflow runs the set-up again before any agent run)."""
        assert self._codebase is not None
        await environment_signals.wake_environment(environment_ref(environment, self._codebase))
        await self._reply(texts.woken(environment.branch_name, environment.working_path))
        environment.status = "active"
        return environment

    async def _is_healthy(self, environment: Environment, checked: str | None = None) -> bool:
        assert self._codebase is not None
        if checked is not None and versions.takes_check_from_record():
            return checked == "healthy"
        return (await isolation.validate_environment(environment, self._codebase.host)).status == "healthy"

    async def _retire(self, environment: Environment, conversation: Conversation) -> None:
        """The worktree is gone: mark the environment destroyed, end its workflow and tell the user, once."""
        assert self._codebase is not None
        retired = await environments.retire_environment(
            RetireInput(environment.id, conversation.row_id, workflow.info().workflow_id))
        if retired.marked_now:
            await environment_signals.destroy_environment(DestroyEnvironmentInput(
                environment_ref(environment, self._codebase),
                DestroyRequest(force=False, reason="path gone", key=f"{workflow.info().workflow_id}:retire"),
            ))
            await self._reply(texts.worktree_gone(environment.working_path, environment.branch_name))

    async def _reply(self, text: str, key: str | None = None) -> None:
        key = key or f"{workflow.info().workflow_id}:{len(self._replies)}"
        self._replies.append(text)
        reply = ReplyInput(self._message.platform, self._message.conversation_id, text, key,
                           answers=self._message.message_key)
        await replies.send_reply(reply, locally=versions.uses_local_steps())

    def _finish(self, resolution: Resolution) -> Resolution:
        resolution.replies = list(self._replies)
        attributes = [search_attributes.OUTCOME.value_set(resolution.outcome)]
        if self._codebase is not None:
            attributes.append(search_attributes.CODEBASE.value_set(self._codebase.name))
        if resolution.branch:
            attributes.append(search_attributes.BRANCH.value_set(resolution.branch))
        workflow.upsert_search_attributes(attributes)
        workflow.set_current_details(links.message_details(resolution))
        return resolution


def _environment_to_validate(conversation: Conversation) -> Environment | None:
    """The conversation's environment, unless this very message attached it in an attempt whose
    answer a crash lost: that work is then finished by the steps below, not reused."""
    if conversation.attached_by == workflow.info().workflow_id:
        return None
    return conversation.environment
