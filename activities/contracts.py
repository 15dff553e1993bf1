"""What workflows and activities exchange: typed inputs, outputs and error types.

Workflows import this module, so it must stay free of I/O libraries.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

# ApplicationError types raised as non-retryable: the input is wrong, retrying cannot help.
INVALID_REPOSITORY = "InvalidRepository"
NAME_TAKEN = "NameTaken"
WORKTREE_CONFLICT = "WorktreeConflict"
UNSAFE_PATH = "UnsafePath"
INVALID_BRANCH = "InvalidBranch"
NO_WORKER = "NoWorkerForHost"
USER_ERRORS = [INVALID_REPOSITORY, NAME_TAKEN, WORKTREE_CONFLICT, UNSAFE_PATH, INVALID_BRANCH, NO_WORKER]


@dataclass
class Codebase:
    id: str
    name: str
    canonical_path: str
    default_branch: str
    host: str
    repository_url: str | None = None


@dataclass
class Environment:
    id: str
    codebase_id: str
    workflow_type: str
    workflow_id: str
    working_path: str
    branch_name: str
    status: str


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


@dataclass
class EnvironmentCheckInput:
    working_path: str
    host: str


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
class WorktreeRequest:
    codebase: Codebase
    branch: str
    # default: a new branch from the default branch (or the existing branch of that name);
    # pr_branch: fetch the PR's own branch from origin and track it, so pushes go to the PR;
    # pr_fork: fetch refs/pull/N/head from origin and start `branch` at `head_sha`
    source: Literal["default", "pr_branch", "pr_fork"] = "default"
    pr_number: str | None = None
    head_sha: str | None = None


@dataclass
class AdoptQuery:
    codebase: Codebase
    # the branch the service would create; its worktree path is the expected path
    branch: str
    # the PR's branch; a worktree on it, or on its slugified form, is adopted too
    pr_branch: str | None = None


@dataclass
class Adoptable:
    path: str
    branch: str


@dataclass
class AdoptionSearch:
    """What `find_adoptable_worktree` found; "elsewhere" when asked on a host that does not hold the codebase."""

    outcome: Literal["adoptable", "none", "elsewhere"]
    adoptable: Adoptable | None = None


@dataclass
class WorktreeReady:
    path: str
    branch: str
    # False when a healthy worktree on this branch was already at the path
    created: bool
    # the default branch's commit a new branch was started at; a branch still there holds no work
    fresh_from: str | None = None


@dataclass
class WorktreeCreation:
    """What `create_worktree_here` did; "elsewhere" when asked on a host that does not hold the codebase."""

    outcome: Literal["ready", "elsewhere"]
    worktree: WorktreeReady | None = None


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


@dataclass
class RecordedEnvironment:
    environment: Environment
    # False when another message recorded the same identity first
    created: bool
    attachment_changed: bool


@dataclass
class ReplyInput:
    platform: str
    conversation_id: str
    text: str
    # a retried activity must not send twice
    idempotency_key: str


@dataclass
class RepositorySource:
    """Where a codebase comes from: a local checkout, a clone URL, or both."""

    host: str
    path: str | None = None
    url: str | None = None
    name: str | None = None


@dataclass
class RepositoryInfo:
    name: str
    canonical_path: str
    default_branch: str
    repository_url: str | None
    host: str


@dataclass
class RegisteredCodebase:
    codebase: Codebase
    # False when the repository was already registered and nothing was cloned
    created: bool


@dataclass
class LinkCodebaseInput:
    conversation_row_id: str
    codebase_id: str
