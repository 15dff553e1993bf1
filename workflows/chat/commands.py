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
    from activities.git.paths import is_valid_codebase_name
    from isolator.clone_rules import clone_refusal, spelling_refusal
    from isolator.contracts.agent import StopReport, StopRequest
    from isolator.contracts.approvals import BudgetRaise
    from isolator.contracts.agent_session import SessionQuery
    from isolator.contracts.codebase import RepositorySource
    from isolator.contracts.environment import conversation_key
    from isolator.contracts.message import Conversation, LinkCodebaseInput, MessageInput
    from isolator.repositories import is_clone_url, looks_like_path
    from workflows.chat import agent_texts, automation_commands, budget, pull_requests, session_texts, texts
    from workflows.chat.worktree import WorktreeCommands, status_counts
    from workflows.codebase import RegisterCodebaseWorkflow
    from workflows.errors import user_error
    from workflows.provisioning import Reply
    from workflows.steps import versions
    from workflows.steps.chat import conversations
    from workflows.steps.codebases import registration as codebases
    from workflows.steps.environments import records as environments
    from workflows.steps.runs import budget as budget_steps, queue as agent_runs, session_commands as agent_sessions
    from workflows.steps.warm import pool as warm_pool


@dataclass
class Command:
    name: str
    args: list[str] = field(default_factory=list)
    given: str = ""  # the name as the message wrote it, which "unknown" replies quote


def parse_command(text: str) -> Command | None:
    """The command a message starts with, after any @mentions; None for an ordinary message."""
    words = text.split()
    while words and words[0].startswith("@"):
        words.pop(0)
    if not words or not words[0].startswith("/") or len(words[0]) < 2:
        return None
    given = words[0][1:].split("@", 1)[0]  # Telegram sends `/status@botname`
    name = given.lower()
    return Command(name=name if name in HANDLERS else "unknown", args=words[1:], given=given)


def finds_worktree_first(command: Command, conversation: Conversation) -> bool:
    """A command about the worktree and its PR, in a conversation of a known codebase that has no worktree
    yet (a PR's, before anyone wrote there): the worktree is looked up first, as for a message
    (workflows/message.py), and nothing is made for it."""
    environment = conversation.environment
    return (command.name in ("status", "fix-ci", "update-branch") and conversation.codebase is not None
            and (environment is None or environment.status not in ("active", "hibernated"))
            and versions.commands_find_worktrees())


async def run_command(command: Command, conversation: Conversation, message: MessageInput, reply: Reply) -> None:
    admission = message.admission
    if admission is not None and admission.admin_refused is not None and (
            destroys_or_restores(command) or (command.name == "budget" and bool(command.args))):
        await reply(admission.admin_refused)  # ADMIN_USERS narrows these further
        return
    handler = HANDLERS.get(command.name, _unknown)
    await handler(command, conversation, message, reply)


def destroys_or_restores(command: Command) -> bool:
    """`/clone`, `/worktree remove --force`, `/worktree cleanup` (not its `--dry-run`), `/worktree restore`."""
    if command.name == "clone":
        return True
    if command.name != "worktree" or not command.args:
        return False
    subcommand, args = command.args[0].lower(), command.args[1:]
    return ((subcommand == "remove" and "--force" in args) or (subcommand == "cleanup" and "--dry-run" not in args)
            or subcommand == "restore")


async def _help(command: Command, conversation: Conversation, message: MessageInput, reply: Reply) -> None:
    await reply(texts.HELP)


async def _unknown(command: Command, conversation: Conversation, message: MessageInput, reply: Reply) -> None:
    workflow.logger.info("unknown command /%s from %s", command.given[:40], message.platform)  # the user's mistake
    await reply(texts.unknown_command(command.given))


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
    if details is not None and details.awaiting:
        text += "\n" + "\n".join(details.awaiting)
    if environment is not None and agent_sessions.knows_agent_sessions():
        session = await agent_sessions.agent_session_summary(SessionQuery(message.platform, message.conversation_id))
        text += f"\n{session_texts.status_line(session)}"
    if environment is not None and active and conversation.codebase is not None:
        if (pull := await pull_requests.status_line(conversation.codebase, environment)) is not None:
            text += f"\n{pull}"
    if conversation.host_silence:  # its host is silent: what the database says, and what waits
        counts: str | None = conversation.host_silence
    else:  # its host answered (or this worker is it): said before the counts it made
        counts = await status_counts(conversation.codebase) if conversation.codebase else None
        if counts and conversation.codebase is not None:
            counts = f"{texts.host_alive(conversation.codebase.host)}\n{counts}"
    warm = await warm_pool.pool_lines(conversation.codebase) if conversation.codebase else ""
    here = await automation_commands.status_line(message)
    await reply(text + (f"\n{counts}" if counts else "") + (f"\n{warm}" if warm else "") + here)


async def _budget(command: Command, conversation: Conversation, message: MessageInput, reply: Reply) -> None:
    if conversation.codebase is None:
        await reply(texts.no_codebase(conversation.codebase_choices))
        return
    if not command.args:
        await reply(budget.describe(await budget_steps.daily_budget(conversation.codebase.id)))
        return
    if (amount := budget.amount_of(command.args)) is None:
        await reply(budget.USAGE)
        return
    by = message.user or (message.admission.sender if message.admission else "someone")
    raised = await budget_steps.raise_daily_budget(BudgetRaise(conversation.codebase.id, amount, by, message.platform,
                                                   message.conversation_id, workflow.info().workflow_id))
    await reply(budget.describe(raised, amount, by))


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


async def _reset(command: Command, conversation: Conversation, message: MessageInput, reply: Reply) -> None:
    if not agent_sessions.knows_agent_sessions():  # a message from before `/reset` existed, replayed
        await _unknown(command, conversation, message, reply)
        return
    if command.args:
        await reply(session_texts.RESET_USAGE)
        return
    previous = await agent_sessions.reset_agent_session(SessionQuery(message.platform, message.conversation_id))
    await reply(session_texts.reset(previous))


async def _worktree(command: Command, conversation: Conversation, message: MessageInput, reply: Reply) -> None:
    if conversation.codebase is None:
        await reply(texts.no_codebase(conversation.codebase_choices))
        return
    await WorktreeCommands(message, conversation, conversation.codebase, reply).run(command.args)


async def _clone(command: Command, conversation: Conversation, message: MessageInput, reply: Reply) -> None:
    target = command.args[0] if len(command.args) == 1 else ""
    if looks_like_path(target):
        source = RepositorySource(host=message.default_host, path=target)
    elif is_clone_url(target) or ":" in target:  # meant as a URL: one git reads otherwise is refused, saying why
        source = RepositorySource(host=message.default_host, url=target)
    elif is_valid_codebase_name(target) and versions.clones_by_name():
        await _choose_by_name(target, conversation, message, reply)
        return
    else:
        await reply(texts.CLONE_USAGE)
        return
    if message.admission is not None:  # from a chat platform: only what its ClonePolicy takes
        policy = message.admission.clone
        if (refusal := clone_refusal(target, policy, is_path=source.path is not None)) is not None:
            await reply(texts.clone_failed(target, refusal))
            return
        if source.path is not None:
            source.allowed_roots = policy.roots  # checked again once links are resolved
    if source.url is not None and (refusal := spelling_refusal(target)) is not None:
        await reply(texts.clone_failed(target, refusal))
        return
    try:
        registered = await workflow.execute_child_workflow(
            RegisterCodebaseWorkflow.run, source, id=f"{workflow.info().workflow_id}:clone"
        )
    except ChildWorkflowError as error:
        await reply(texts.clone_failed(target, user_error(error)))
        return
    if registered.codebase is None:  # the user's mistake, said as it was found
        await reply(texts.clone_failed(target, registered.problem or "it could not be registered"))
        return
    await conversations.link_conversation_codebase(LinkCodebaseInput(conversation.row_id, registered.codebase.id))
    await reply(texts.codebase_linked(registered.codebase.name, registered.codebase.canonical_path, registered.created))


async def _choose_by_name(name: str, conversation: Conversation, message: MessageInput, reply: Reply) -> None:
    """`/clone <name>`: a codebase registered already, by the name the replies list it under."""
    codebase = await codebases.find_codebase(RepositorySource(host=message.default_host, name=name))
    if codebase is None:
        await reply(texts.no_codebase_named(name, conversation.codebase_choices))
        return
    await conversations.link_conversation_codebase(LinkCodebaseInput(conversation.row_id, codebase.id))
    await reply(texts.codebase_linked(codebase.name, codebase.canonical_path, created=False))
async def _pr(command: Command, conversation: Conversation, message: MessageInput, reply: Reply) -> None:
    await pull_requests.open_pull_request(command.args, conversation, message, reply)


async def _fix_ci(command: Command, conversation: Conversation, message: MessageInput, reply: Reply) -> None:
    if not await pull_requests.ask_loop("fix_ci", command.args, conversation, message, reply):
        await _unknown(command, conversation, message, reply)


async def _update_branch(command: Command, conversation: Conversation, message: MessageInput, reply: Reply) -> None:
    if not await pull_requests.ask_loop("update_branch", command.args, conversation, message, reply):
        await _unknown(command, conversation, message, reply)


async def _automation(command: Command, conversation: Conversation, message: MessageInput, reply: Reply) -> None:
    if not await automation_commands.run(command.args, message, reply):
        await _unknown(command, conversation, message, reply)


Handler = Callable[[Command, Conversation, MessageInput, Reply], Awaitable[None]]
HANDLERS: dict[str, Handler] = {
    "help": _help, "status": _status, "budget": _budget, "clone": _clone, "worktree": _worktree, "stop": _stop, "reset": _reset,
    "pr": _pr, "fix-ci": _fix_ci, "update-branch": _update_branch, "automation": _automation,
}
