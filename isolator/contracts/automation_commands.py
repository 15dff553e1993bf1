"""Chat's `/automation …` commands and `/status`'s line of the automations reporting in a conversation."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class AutomationCommand:
    """`/automation <subcommand> [name]` as a message sent it, with who sent it."""

    platform: str
    conversation_id: str
    args: list[str] = field(default_factory=list)
    # the sender's id on the platform (a GitHub login lowercased), which its ADMIN_USERS list
    user: str | None = None
    # the message came through its platform's allow rule (an Admission): ADMIN_USERS decide. Without one
    # (the test adapter, `isolator dev`) it is allowed, as every command is.
    admitted: bool = False
    sender: str = ""  # who, in the platform's words, for the note on a pause
    # the message's workflow: a retried `run` starts the one firing it started
    message_workflow_id: str = ""


@dataclass
class ReportPlaceQuery:
    platform: str
    conversation_id: str
