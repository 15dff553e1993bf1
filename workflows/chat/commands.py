"""Chat commands: which exist, how a message names one, and what each does. Run inside the
MessageWorkflow, so deterministic: steps only.

A new command is one handler in HANDLERS, plus its texts (texts.py, or its own texts module).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Awaitable, Callable

from temporalio import workflow
from temporalio.exceptions import ChildWorkflowError

with workflow.unsafe.imports_passed_through():
    from activities.repositories import is_clone_url, looks_like_path
    from isolator.contracts.agent import StopReport, StopRequest
    from isolator.contracts.codebase import RepositorySource
    from isolator.contracts.environment import conversation_key
    from isolator.contracts.message import Conversation, LinkCodebaseInput, MessageInput
    from workflows.chat import agent_texts, pull_requests, texts
    from workflows.chat.worktree import WorktreeCommands, status_counts
    from workflows.codebase import RegisterCodebaseWorkflow
    from workflows.errors import user_error
    from workflows.provisioning import Reply
    from workflows.steps import agent_runs, conversations, environments


@dataclass
class Command:
    name: str
    args: list[str] = field(default_factory=list)


def parse_command(text: str) -> Command | None:
    """The command a message starts with, after any @mentions; None for an ordinary message."""
    words = text.split()
    while words and words[0].startswith("@"):
        words.pop(0)
    if not words or not words[0].startswith("/") or len(words[0]) < 2:
        return None
    name = words[0][1:].split("@", 1)[0].lower()  # Telegram sends `/status@botname`
    return Command(name=name if name in HANDLERS else "unknown", args=words[1:])


async def run_command(command: Command, conversation: Conversation, message: MessageInput, reply: Reply) -> None:
    handler = HANDLERS.get(command.name, _unknown)
    await handler(command, conversation, message, reply)


async def _help(command: Command, conversation: Conversation, message: MessageInput, reply: Reply) -> None:
    await reply(texts.HELP)


async def _unknown(command: Command, conversation: Conversation, message: MessageInput, reply: Reply) -> None:
    await reply(texts.UNKNOWN_COMMAND)


async def _status(command: Command, conversation: Conversation, message: MessageInput, reply: Reply) -> None:
    environment = conversation.environment
    if environment is not None and environment.status not in ("active", "hibernated"):
        environment = None
    active = environment is not None and environment.status == "active"
    details = await environments.environment_details(environment.id) if environment and active else None
    text = texts.status(
        conversation.codebase.name if conversation.codebase else None,
        conversation.cwd,
        environment.working_path if environment else None,
        environment.branch_name if environment else None,
        details,
        hibernated=environment is not None and not active,
    )
    if details is not None and (runs := agent_texts.runs_status(details.running, details.queued)):
        text += f"\n{runs}"
    if environment is not None and active and conversation.codebase is not None:
        if (pull := await pull_requests.status_line(conversation.codebase, environment)) is not None:
            text += f"\n{pull}"
    counts = await status_counts(conversation.codebase) if conversation.codebase else None
    await reply(text + (f"\n{counts}" if counts else ""))


async def _stop(command: Command, conversation: Conversation, message: MessageInput, reply: Reply) -> None:
    environment = conversation.environment
    if command.args:
        await reply(texts.STOP_USAGE)
        return
    if environment is None or environment.status != "active":
        await reply(agent_texts.stopped(StopReport()))
        return
    report = await agent_runs.stop_agent_runs(StopRequest(
        environment.id, conversation_key(message.platform, message.conversation_id), workflow.info().workflow_id,
    ))
    await reply(agent_texts.stopped(report))


async def _worktree(command: Command, conversation: Conversation, message: MessageInput, reply: Reply) -> None:
    if conversation.codebase is None:
        await reply(texts.no_codebase(conversation.codebase_choices))
        return
    await WorktreeCommands(message, conversation, conversation.codebase, reply).run(command.args)


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
        await reply(texts.clone_failed(target, user_error(error)))
        return
    await conversations.link_conversation_codebase(LinkCodebaseInput(conversation.row_id, registered.codebase.id))
    await reply(texts.codebase_linked(registered.codebase.name, registered.codebase.canonical_path, registered.created))


async def _pr(command: Command, conversation: Conversation, message: MessageInput, reply: Reply) -> None:
    await pull_requests.open_pull_request(command.args, conversation, message, reply)


Handler = Callable[[Command, Conversation, MessageInput, Reply], Awaitable[None]]
HANDLERS: dict[str, Handler] = {
    "help": _help, "status": _status, "clone": _clone, "worktree": _worktree, "stop": _stop, "pr": _pr,
}
