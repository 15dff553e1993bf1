"""Isolation environments: their rows, the lookups and records of the message path, and what the
environment's own workflow is told (attach, detach, close, destroy) and holds."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from isolator.contracts.agent import RunRequest
from isolator.contracts.approvals import ApprovalAsk, Decision
from isolator.contracts.codebase import Codebase
from isolator.contracts.repository import PortBlock, RepositorySetup, SetupState
from isolator.contracts.worktree import WORKTREE_PROVIDER, RemovalReport, RestoredWorktree


@dataclass
class Environment:
    id: str
    codebase_id: str
    workflow_type: str
    workflow_id: str
    working_path: str
    branch_name: str
    status: str
    provider: str = WORKTREE_PROVIDER
    from_fork: bool = False  # a PR from a fork (recorded in its metadata)
    setup_state: SetupState = "none"  # "running": a message waits for it before it is done
    adopted: bool = False  # found on disk and recorded as it was (recorded in its metadata)
    recorded_by: str | None = None  # the message workflow that recorded it (a retry knows its own)


@dataclass
class EnvironmentCheckInput:
    working_path: str
    host: str
    provider: str = WORKTREE_PROVIDER


@dataclass
class EnvironmentCheck:
    # "elsewhere": the path lives on another host; ask that host's queue instead
    status: Literal["healthy", "missing", "elsewhere"]


@dataclass
class IdentityQuery:
    codebase_id: str
    workflow_type: str
    workflow_id: str


@dataclass
class RetireInput:
    environment_id: str
    conversation_row_id: str
    key: str | None = None  # the retiring message workflow's id: run again, it marked it


@dataclass
class Retired:
    # False when another message had already marked it destroyed
    marked_now: bool


@dataclass
class AttachInput:
    conversation_row_id: str
    environment_id: str
    cwd: str
    # the attaching message: its retries count the attachment as theirs
    key: str | None = None


@dataclass
class Attached:
    changed: bool


@dataclass
class RecordEnvironmentInput:
    conversation_row_id: str
    codebase_id: str
    workflow_type: str
    workflow_id: str
    working_path: str
    branch_name: str
    platform: str
    metadata: dict[str, Any] = field(default_factory=dict)
    # False for an adopted worktree: nothing is created, so MAX_WORKTREES_PER_CODEBASE does not apply
    counts_against_limit: bool = True
    # the recording message: its retries count the row and the attachment as theirs
    key: str | None = None
    provider: str = WORKTREE_PROVIDER


@dataclass
class RecordedEnvironment:
    environment: Environment
    # False when another message recorded the same identity first
    created: bool
    attachment_changed: bool


@dataclass
class EnvironmentsOfCodebase:
    codebase_id: str
    hibernated: bool = False  # the hibernated ones, not the active ones


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
    reason: str | None = None  # why it was removed, kept with it (a merged one's proof included)
    archive_ref: str | None = None  # what the removal saved (refs/isolator/archive/<id>)
    branch_tip: str | None = None


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
    provider: str = WORKTREE_PROVIDER
    # a PR from a fork: its set-up runs only when `.isolator.toml` trusts forks
    from_fork: bool = False


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
    # a merged one's: which check found all of its work upstream (kept with the environment)
    proof: str | None = None

    def recorded_reason(self) -> str:
        return f"{self.reason}: {self.proof}" if self.proof else self.reason

    def takes_dirty(self) -> bool:
        """A dirty worktree goes (archived, restorable) unless someone asked for this removal by name
        without --force: they are told about the changes instead."""
        return self.force or self.reason not in ASKED_BY_NAME


# The reasons of removals a person asked for: refused, such a removal ends there (they are told why).
ASKED_BY_A_PERSON = ("removed by command", "removed through the API", "removed from the dashboard")
# The removals that keep a dirty worktree: a person's, and "retry", the hourly retry of any refused
# removal in workflows started before the service retried only its own (workflows/environment_removal.py).
ASKED_BY_NAME = (*ASKED_BY_A_PERSON, "retry")
# The scheduled cleanup's reason when it hibernates an environment to keep within DISK_BUDGET_GB.
HIBERNATE = "hibernated"


@dataclass
class AttachRequest:
    """Start the environment's workflow if it is not running, and attach the conversation (none: a
    restore through the API starts the workflow of an environment nobody talks in yet)."""

    environment: EnvironmentRef
    signal: ConversationSignal | None
    # the conversation's previous environment, detached in the same step
    previous_environment_id: str | None = None
    # a new worktree's set-up as its creation read it: the workflow's first set-up starts from it
    setup: RepositorySetup | None = None


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
class PortRequest:
    environment_id: str
    count: int
    host: str  # the codebase's: its ports are bound and checked there
    preferred: PortBlock | None = None  # the block of the warm worktree it claimed, taken over when still free


@dataclass
class EnvironmentState:
    """The environment workflow's whole state: its query answer and its continue-as-new input."""

    environment: EnvironmentRef
    attached: list[str] = field(default_factory=list)
    closed: list[str] = field(default_factory=list)
    status: Literal["active", "removing", "removal_refused", "hibernated", "destroyed"] = "active"
    refusal: str | None = None  # why the last removal was refused, for the user
    # the service's own removal (a close, the cleanup) that was refused: tried again every hour until it
    # goes through, or a message in one of the conversations cancels it
    retrying: DestroyRequest | None = None
    # idempotency keys already applied, newest last (bounded)
    seen_keys: list[str] = field(default_factory=list)
    pending: DestroyRequest | None = None  # the next removal to run
    waiting: list[str] = field(default_factory=list)  # request keys the next removal answers
    reports: dict[str, RemovalReport] = field(default_factory=dict)  # by request key, for updates
    # ready to work: the repository's set-up, run by this workflow (workflows/environment_setup.py)
    setup_state: SetupState = "none"
    setup: RepositorySetup | None = None
    ports: PortBlock | None = None
    setup_requested: bool = False  # `/worktree setup` asked for it again
    setup_runs: int = 0
    # the coding agent (workflows/environment_runs.py): queued runs in arrival order, and the running one
    runs: list[RunRequest] = field(default_factory=list)
    running: RunRequest | None = None
    stop_running: bool = False  # `/stop` asked to end the running run
    # hibernated: its archive, and whether a message asked to wake it (and how that went)
    archive_ref: str | None = None
    branch_tip: str | None = None
    wake_requested: bool = False
    woken: RestoredWorktree | None = None
    # a chat's branch has a PR (`/pr`): its runs' work is pushed to it (workflows/environment_results.py)
    has_pull_request: bool = False
    # what the last run asked a person, while its answer is waited for (workflows/environment_approvals.py)
    awaiting: ApprovalAsk | None = None
    decision: Decision | None = None
    answer_run: RunRequest | None = None  # a question answered by the asker's message: its run goes on
    # the asker's reply to a question sent while the run that asked was still ending: held for its wait
    early_answer: RunRequest | None = None


@dataclass
class AgentRunInput:
    """One run of the agent, as the environment's workflow starts it (workflows/agent_run.py)."""

    run: RunRequest
    environment: EnvironmentRef
    ports: PortBlock | None = None
