"""`/worktree removed` and `/worktree restore <name>`, run inside the MessageWorkflow."""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from isolator.contracts.archive import RemovedQuery, RestoreRequest
    from isolator.contracts.codebase import Codebase
    from isolator.contracts.message import Conversation, MessageInput
    from workflows.chat import archive_texts, worktree_texts
    from workflows.provisioning import Reply
    from workflows.restore import RestoreEnvironmentWorkflow
    from workflows.steps.environments import archives


async def list_removed(codebase: Codebase, reply: Reply) -> None:
    listing = await archives.list_removed_environments(RemovedQuery(codebase.id))
    await reply(archive_texts.removed_listing(codebase.name, listing))


async def explain_removed(name: str, codebase: Codebase, reply: Reply) -> None:
    """`/worktree why` of a name whose worktree is archived (removed or hibernated), or unknown."""
    listing = await archives.list_removed_environments(RemovedQuery(codebase.id, name))
    if not listing.environments:
        await reply(worktree_texts.unknown_worktree(name, codebase.name))
        return
    await reply(archive_texts.removed_listing(codebase.name, listing))


async def restore_named(name: str, message: MessageInput, conversation: Conversation, codebase: Codebase,
                        reply: Reply) -> None:
    """The latest removal under `name` comes back, attached to this conversation; the others are listed."""
    listing = await archives.list_removed_environments(RemovedQuery(codebase.id, name))
    if not listing.environments:
        await reply(archive_texts.nothing_named(name, codebase.name))
        return
    latest, others = listing.environments[0], listing.environments[1:]
    wfid = workflow.info().workflow_id
    current = conversation.environment
    report = await workflow.execute_child_workflow(
        RestoreEnvironmentWorkflow.run,
        RestoreRequest(latest.id, key=wfid, conversation_row_id=conversation.row_id, platform=message.platform,
                       conversation_id=message.conversation_id,
                       previous_environment_id=current.id if current is not None else None),
        id=f"{wfid}:restore",
    )
    text = report.message
    if report.outcome in ("restored", "woken") and others:
        text += archive_texts.also_removed(others)
    await reply(text)
