"""What the lifecycle exchanges: environment workflow signals, environment listings, cleanup plans.

Workflows import this module, so it must stay free of I/O libraries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from activities.contracts import Codebase
from activities.worktree_contracts import RemovalReport

# ApplicationError type: the codebase already has MAX_WORKTREES_PER_CODEBASE active environments.
LIMIT_REACHED = "LimitReached"


@dataclass
class EnvironmentRef:
    """Everything the environment workflow needs to remove its worktree, without a database read."""

    environment_id: str
    codebase: Codebase
    working_path: str
    branch: str
    workflow_type: str
    workflow_id: str
    platform: str | None = None


def environment_workflow_id(environment_id: str) -> str:
    return f"environment:{environment_id}"


def conversation_key(platform: str, conversation_id: str) -> str:
    """How the environment workflow names a conversation."""
    return f"{platform}:{conversation_id}"


@dataclass
class ConversationSignal:
    """attach, detach and conversation_closed; `key` makes a repeated signal change nothing."""

    conversation: str  # conversation_key(...)
    key: str


@dataclass
class DestroyRequest:
    force: bool
    reason: str
    key: str
    # who asked, told of the outcome when the environment workflow acts on its own later
    requested_by: str | None = None


@dataclass
class AttachRequest:
    """Start the environment's workflow if it is not running, and attach the conversation."""

    environment: EnvironmentRef
    signal: ConversationSignal
    # the conversation's previous environment, detached in the same step
    previous_environment_id: str | None = None


@dataclass
class SignalRequest:
    environment_id: str
    name: Literal["detach", "conversation_closed"]
    signal: ConversationSignal


@dataclass
class DestroyEnvironmentInput:
    environment: EnvironmentRef
    request: DestroyRequest


@dataclass
class EnvironmentState:
    """The environment workflow's whole state: its query answer and its continue-as-new input."""

    environment: EnvironmentRef
    attached: list[str] = field(default_factory=list)
    closed: list[str] = field(default_factory=list)
    status: Literal["active", "removing", "removal_refused", "destroyed"] = "active"
    refusal: str | None = None  # why the last removal was refused, for the user
    # idempotency keys already applied, newest last (bounded)
    seen_keys: list[str] = field(default_factory=list)
    pending: DestroyRequest | None = None  # the next removal to run
    waiting: list[str] = field(default_factory=list)  # request keys the next removal answers
    reports: dict[str, RemovalReport] = field(default_factory=dict)  # by request key, for updates


@dataclass
class TrackedEnvironment:
    """An active environment with what the cleanup rules need to know about its conversations."""

    ref: EnvironmentRef
    created_by_platform: str | None
    # conversations that still use it: attached, not closed, active within STALE_THRESHOLD_DAYS
    live_conversations: int
    # the latest activity of any attached conversation, or the environment's creation
    days_inactive: int
    start_commit: str | None = None  # the branch tip when we created it; None when adopted


@dataclass
class EnvironmentsOfCodebase:
    codebase_id: str


@dataclass
class EnvironmentListing:
    """A codebase's active environments, with the configured limits the rules apply."""

    environments: list[TrackedEnvironment]
    limit: int  # MAX_WORKTREES_PER_CODEBASE
    stale_threshold_days: int


@dataclass
class EnvironmentCount:
    """How many active environments count against a codebase's limit, and the limit."""

    active: int
    limit: int  # MAX_WORKTREES_PER_CODEBASE


@dataclass
class NamedEnvironmentQuery:
    codebase_id: str
    # `issue-42`, `pr-99`, `thread-1a2b3c4d`, `task-name`, or a branch name
    name: str


@dataclass
class MoveConversationInput:
    conversation_row_id: str
    environment_id: str
    working_path: str


@dataclass
class MarkDestroyedInput:
    environment_id: str


CleanupKind = Literal["missing", "merged", "stale"]


@dataclass
class CodebaseCleanupInput:
    codebase: Codebase
    kinds: list[CleanupKind]
    key: str  # makes the destroy signals of one run idempotent


@dataclass
class Skipped:
    branch: str
    reason: str


@dataclass
class CleanupReport:
    codebase: str
    removed: list[str] = field(default_factory=list)  # "branch (why)"
    skipped: list[Skipped] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)  # rows marked destroyed: their path was gone
    orphans: list[str] = field(default_factory=list)  # worktrees on disk that no row tracks


@dataclass
class CleanupRunReport:
    codebases: list[CleanupReport] = field(default_factory=list)


@dataclass
class Breakdown:
    """`Worktrees: N/LIMIT` and its merged / stale / active split."""

    total: int
    limit: int
    merged: int
    stale: int
    active: int
