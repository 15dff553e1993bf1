"""Messages and conversations: what a platform hands over, what the message workflow decides and
says back, and the conversation rows it reads and writes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from isolator.contracts.approvals import Button
from isolator.contracts.codebase import Codebase
from isolator.contracts.environment import Environment
from isolator.contracts.trust import Admission

Outcome = Literal[
    "reused",  # the conversation's own environment, still healthy
    "attached",  # an active environment of the same identity
    "created",  # a new worktree
    "no_codebase",  # nothing to isolate yet: the user was told how to register one
    "command",  # a command was answered; isolation was not touched
    "host_gone",  # the codebase's host did not come back within HOST_WAIT_HOURS: the message was not run
    "shared",  # a linked issue's environment, e.g. the issue a PR fixes
    "adopted",  # a worktree already on disk, recorded as it is
    "restored",  # the work's worktree, removed when its conversation closed or went quiet, back from its archive
    "closed",  # a close event was recorded
    "limit",  # the codebase is full: nothing was created and the user was told how to free room
    "failed",  # the user was told what went wrong; nothing was left behind
    "refused",  # the platform's allow rule refused the sender: at most one reply, nothing else
]


@dataclass
class MessageInput:
    platform: str
    conversation_id: str
    text: str
    # the platform's delivery key; the workflow ID is built from it
    message_key: str
    # where `/clone` registers new codebases when nothing else says
    default_host: str
    hints: IsolationHints | None = None
    # "closed": the platform closed the conversation (a GitHub issue or PR); no text to answer
    kind: Literal["message", "closed"] = "message"
    # the platform's allow rule applied to the sender, by the API; None: allowed everything (isolator/trust.py)
    admission: Admission | None = None
    user: str | None = None  # the platform's id of the sender: who may answer what its run asks


@dataclass
class Resolution:
    outcome: Outcome
    working_path: str | None = None
    branch: str | None = None
    environment_id: str | None = None
    replies: list[str] = field(default_factory=list)
    run_id: str | None = None  # the agent's run of this message, when one is configured


def message_workflow_id(platform: str, message_key: str) -> str:
    return f"message:{platform}:{message_key}"


@dataclass
class IsolationHints:
    """What a platform knows about the work; the defaults describe a plain chat thread."""

    workflow_type: str = "thread"  # thread | issue | pr | task
    workflow_id: str | None = None  # issue or PR number; the conversation id for threads
    # The repository the event belongs to, matched against registered codebases.
    repository_url: str | None = None
    clone_url: str | None = None  # cloned into the workspace when no codebase matches
    pr_head_branch: str | None = None
    pr_head_sha: str | None = None
    pr_is_fork: bool = False
    linked_issues: list[str] = field(default_factory=list)  # issue numbers a PR closes
    # True when the platform's `complete_hints` activity must fill in the PR fields and links.
    needs_completion: bool = False


@dataclass
class CompleteHintsInput:
    platform: str
    conversation_id: str
    hints: IsolationHints


@dataclass
class ConversationInput:
    platform: str
    conversation_id: str
    # an event's repository: a conversation without a codebase gets the one registered for it
    repository_url: str | None = None


@dataclass
class CloseInput:
    platform: str
    conversation_id: str


@dataclass
class Conversation:
    """A conversation as recorded, with what it resolves to."""

    row_id: str
    platform: str
    conversation_id: str
    cwd: str | None
    codebase: Codebase | None
    environment: Environment | None
    # names of the registered codebases when none could be chosen for this conversation
    codebase_choices: list[str] = field(default_factory=list)
    # the message that attached `environment` (see AttachInput.key)
    attached_by: str | None = None
    # `environment`'s worktree checked as the conversation was recorded: "healthy" or "missing"; None when
    # it was not (no active environment, or its codebase on another host): the workflow then checks it
    environment_check: str | None = None
    # the codebase's host is the recording worker's own (None: not known, as in runs recorded before this)
    codebase_here: bool | None = None
    # set by the message's workflow when the codebase's host does not answer: `/status` says it, from the database
    host_silence: str | None = None


@dataclass
class ConversationMoved:
    """What a conversation left behind when it moved to another worktree."""

    previous_branch: str | None = None  # the worktree it worked in before, if any
    previous_left_alone: bool = False  # no open conversation works there any more


@dataclass
class LinkCodebaseInput:
    conversation_row_id: str
    codebase_id: str


@dataclass
class ReplyInput:
    platform: str
    conversation_id: str
    text: str
    # a retried activity must not send twice
    idempotency_key: str
    # the key of an earlier reply this one replaces: that message is updated in place (progress)
    updates: str | None = None
    # the message_key of the message this reply answers (a Discord slash command is answered by follow-ups)
    answers: str | None = None
    # answers a person may press (an approval's); an update without them takes the old ones away
    buttons: list[Button] = field(default_factory=list)
