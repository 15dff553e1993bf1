"""Chat's `/automation list|show|run|pause|resume` (for the platform's ADMIN_USERS; the step decides who
may) and `/status`'s line of the automations that report in its conversation (docs/automations.md).

Messages from before these existed replay as they ran: `/automation` was an unknown command, and `/status`
named no automation (workflow.patched)."""

from __future__ import annotations

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from isolator.contracts.automation_commands import AutomationCommand, ReportPlaceQuery
    from isolator.contracts.message import MessageInput
    from workflows.provisioning import Reply
    from workflows.steps.automations import commands as steps

AUTOMATION_COMMANDS = "automation-commands"


def knows_automations() -> bool:
    return workflow.patched(AUTOMATION_COMMANDS)


async def run(args: list[str], message: MessageInput, reply: Reply) -> bool:
    """False for a message from before `/automation` existed, replayed: the caller says it is unknown."""
    if not knows_automations():
        return False
    admission = message.admission
    await reply(await steps.automation_command(AutomationCommand(
        platform=message.platform, conversation_id=message.conversation_id, args=args,
        user=admission.user if admission is not None else message.user, admitted=admission is not None,
        sender=admission.sender if admission is not None else (message.user or ""),
        message_workflow_id=workflow.info().workflow_id)))
    return True


async def status_line(message: MessageInput) -> str:
    """`\\n` and the automations reporting in this conversation, or nothing."""
    if not knows_automations():
        return ""
    names = await steps.automations_reporting_here(ReportPlaceQuery(message.platform, message.conversation_id))
    if not names:
        return ""
    return "\nAutomations reporting here: " + ", ".join(f"`{name}`" for name in names) + " (`/automation show <name>`)"
