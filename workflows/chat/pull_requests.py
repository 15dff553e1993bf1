"""`/pr <title>`: a chat conversation's worktree proposed as a pull request; and the PR line of `/status`.

Run inside the MessageWorkflow: steps only. The push and the PR are the environment workflow's to
do (it owns the worktree), between its runs; after that, its later runs push to the PR.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ActivityError

with workflow.unsafe.imports_passed_through():
    from isolator.contracts.codebase import Codebase
    from isolator.contracts.environment import Environment, conversation_key
    from isolator.contracts.message import Conversation, MessageInput
    from isolator.contracts.pr_loop import AskLoop, FeedbackKind
    from isolator.contracts.results import PullRequestAsk, PullRequestStatusRequest
    from workflows.chat import pr_loop_texts
    from workflows.provisioning import Reply
    from workflows.steps.results import delivery as results
    from workflows.steps.results import pr_loop

PR_USAGE = ("Usage: `/pr <title>`, for example `/pr Add a health check`: commits what this conversation's worktree "
            "holds, pushes its branch to origin and opens a draft pull request; later runs push to it.")
# From this version `/status` shows the worktree's pull request, its state and its checks.
STATUS_SHOWS_PR = "status-shows-pull-request"
# From this version `/fix-ci` and `/update-branch` are commands (docs/pr-loop.md); before, unknown ones.
LOOP_COMMANDS = "pull-request-loop-commands"


async def open_pull_request(args: list[str], conversation: Conversation, message: MessageInput, reply: Reply) -> None:
    title = " ".join(args).strip()
    environment = conversation.environment
    if not title or len(title) > 256:
        await reply(PR_USAGE)
        return
    if conversation.codebase is None or environment is None or environment.status != "active":
        await reply("This conversation has no worktree yet: send the agent a message first, then `/pr <title>`.")
        return
    if environment.workflow_type == "pr":
        await reply("This conversation is a pull request already: its runs push to its branch (a fork's never).")
        return
    delivery = await results.ask_pull_request(PullRequestAsk(
        environment.id, conversation_key(message.platform, message.conversation_id), title, workflow.info().workflow_id,
    ))
    if delivery.outcome == "nothing":
        await reply(f"Nothing to propose yet: `{environment.branch_name}` has no work beyond "
                    f"`{conversation.codebase.default_branch}`.")
    elif delivery.outcome == "off":
        await reply(delivery.text or "Results are switched off on this service (`RESULTS=off`): nothing was pushed.")
    else:
        await reply(delivery.text)


async def status_line(codebase: Codebase, environment: Environment) -> str | None:
    """`PR: draft #57 (open), checks: 2 passed, 1 pending, <link>`, for a worktree with a PR."""
    if not workflow.patched(STATUS_SHOWS_PR):
        return None
    try:
        found = await results.pull_request_status(PullRequestStatusRequest(codebase, environment.branch_name))
    except ActivityError as error:  # /status answers without it
        workflow.logger.warning("the PR of %s not read: %s", environment.branch_name, error.cause)
        return None
    pull = found.pull_request
    if pull is None:
        return None
    state = pull.state + ("" if found.fresh else ", as last seen: GitHub could not be asked")
    checks = f", checks: {found.checks}" if found.checks else ", no checks"
    line = f"PR: {'draft ' if pull.draft else ''}#{pull.number} ({state}){checks}, {pull.url}"
    return line + (f"\n{found.ci_loop}" if found.ci_loop else "")


async def ask_loop(kind: FeedbackKind, args: list[str], conversation: Conversation, message: MessageInput,
                   reply: Reply) -> bool:
    """`/fix-ci` or `/update-branch` for the conversation's worktree's PR; False for a message from before
    they existed (the caller answers as to an unknown command)."""
    if not workflow.patched(LOOP_COMMANDS):
        return False
    if args:
        await reply(pr_loop_texts.FIX_CI_USAGE if kind == "fix_ci" else pr_loop_texts.UPDATE_BRANCH_USAGE)
        return True
    environment = conversation.environment
    if conversation.codebase is None or environment is None or environment.status != "active":
        await reply("This conversation has no worktree, so no pull request: send the agent a message first.")
        return True
    decision = await pr_loop.ask_pull_request_loop(AskLoop(
        kind, conversation.codebase.id, environment.branch_name,
        conversation_key(message.platform, message.conversation_id), workflow.info().workflow_id))
    await reply(pr_loop_texts.asked(kind, decision.outcome, decision.reason))
    return True
