"""Answers to chat commands, run inside the MessageWorkflow (deterministic: steps only)."""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ChildWorkflowError

with workflow.unsafe.imports_passed_through():
    from activities.contracts import Conversation, LinkCodebaseInput, RepositorySource
    from activities.repositories import is_clone_url, looks_like_path
    from workflows import steps, texts, worktree_texts
    from workflows.codebase import RegisterCodebaseWorkflow
    from workflows.commands import Command
    from workflows.contracts import MessageInput
    from workflows.errors import user_error
    from workflows.provisioning import Reply
    from workflows.worktree_commands import WorktreeCommands, status_counts


async def answer_command(command: Command, conversation: Conversation, message: MessageInput, reply: Reply) -> None:
    if command.name == "help":
        await reply(texts.HELP)
    elif command.name == "status":
        counts = await status_counts(conversation.codebase) if conversation.codebase else None
        await reply(_status(conversation) + (f"\n{counts}" if counts else ""))
    elif command.name == "worktree" and conversation.codebase is None:
        await reply(texts.no_codebase(conversation.codebase_choices))
    elif command.name == "worktree":
        await WorktreeCommands(message, conversation, conversation.codebase, reply).answer(command)
    elif command.name == "clone":
        await _clone(command, conversation, message, reply)
    else:
        await reply(texts.UNKNOWN_COMMAND)


def _status(conversation: Conversation) -> str:
    environment = conversation.environment
    if environment is not None and environment.status != "active":
        environment = None
    return texts.status(
        conversation.codebase.name if conversation.codebase else None,
        conversation.cwd,
        environment.working_path if environment else None,
        environment.branch_name if environment else None,
    )


async def _clone(command: Command, conversation: Conversation, message: MessageInput, reply: Reply) -> None:
    target = command.args[0] if len(command.args) == 1 else ""
    if looks_like_path(target):
        source = RepositorySource(host=message.default_host, path=target)
    elif is_clone_url(target):
        source = RepositorySource(host=message.default_host, url=target)
    else:
        await reply(texts.CLONE_USAGE)
        return
    try:
        registered = await workflow.execute_child_workflow(
            RegisterCodebaseWorkflow.run, source, id=f"{workflow.info().workflow_id}:clone"
        )
    except ChildWorkflowError as error:
        shown = worktree_texts.quoted_safely(target, limit=200)
        await reply(f"Could not register `{shown}`: {user_error(error)}\n{texts.CLONE_USAGE}")
        return
    await steps.link_conversation_codebase(LinkCodebaseInput(conversation.row_id, registered.codebase.id))
    await reply(texts.codebase_linked(registered.codebase.name, registered.codebase.canonical_path, registered.created))
