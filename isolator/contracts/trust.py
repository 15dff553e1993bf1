"""What the API decided about a message's sender, before its workflow started: the workflow acts on it."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ClonePolicy:
    """What `/clone` takes from this chat: URLs on these hosts, local paths under these absolute folders."""

    hosts: list[str] = field(default_factory=list)
    roots: list[str] = field(default_factory=list)


@dataclass
class Admission:
    """The platform's allow rule applied to the sender. A message without one (the test adapter, a
    platform's close event, runs started before the rules existed) is allowed everything."""

    # who sent it, in the platform's words, for the record: `octocat (NONE)`, `user 111222333`
    sender: str
    # set when the sender is refused: the one reply, naming what would allow them
    refused: str | None = None
    # the refusal was answered where the message came in (a Discord slash command, to its user alone)
    answered: bool = False
    # set when ADMIN_USERS narrows the commands that destroy or restore work and the sender is not listed
    admin_refused: str | None = None
    clone: ClonePolicy = field(default_factory=ClonePolicy)
    # the platform's id of the sender (a GitHub login lowercased): who may answer what its run asks
    user: str | None = None


@dataclass
class RefusalReplyInput:
    platform: str
    conversation_id: str
    # the refused message's workflow: a retried claim by the same message is granted again
    claimed_by: str
