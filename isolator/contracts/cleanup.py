"""Cleanup: what the rules are told about each environment, and what a cleanup reports."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from isolator.contracts.codebase import Codebase
from isolator.contracts.environment import EnvironmentRef


@dataclass
class OpenConversation:
    """A conversation attached to an environment and not closed by its platform."""

    platform: str
    days_inactive: int  # since its last message
    conversation_id: str = ""  # the platform's id of the conversation


@dataclass
class TrackedEnvironment:
    """An active environment with the facts about its conversations that the cleanup rules read
    (isolator/cleanup_rules.py decides what they mean: live, stale)."""

    ref: EnvironmentRef
    created_by_platform: str | None
    # the latest activity of any attached conversation, or the environment's creation
    days_inactive: int
    start_commit: str | None = None  # the branch tip when we created it; None when adopted
    open_conversations: list[OpenConversation] = field(default_factory=list)
    seconds_inactive: int = 0  # days_inactive, finer: the disk budget hibernates the least recently active first


@dataclass
class EnvironmentListing:
    """A codebase's active environments, with the configured limits the rules apply."""

    environments: list[TrackedEnvironment]
    limit: int  # MAX_WORKTREES_PER_CODEBASE
    stale_threshold_days: int
    disk_budget_bytes: int | None = None  # DISK_BUDGET_GB; None: no budget


# "archives": prune those past ARCHIVE_RETENTION_DAYS; "budget": hibernate down to DISK_BUDGET_GB (both
# scheduled only, and both also record each worktree's measured size for the API).
CleanupKind = Literal["missing", "merged", "stale", "archives", "budget"]


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
    pruned: list[str] = field(default_factory=list)  # "branch (branch deleted|kept)": archives past retention
    hibernated: list[str] = field(default_factory=list)  # "branch (size)": to keep within the disk budget


@dataclass
class CleanupRunReport:
    codebases: list[CleanupReport] = field(default_factory=list)
    # hosts whose codebases were not swept (or not all): no worker took their step, or one went silent
    hosts_not_answering: list[str] = field(default_factory=list)


@dataclass
class HostCleanupInput:
    """One host's codebases, swept by a workflow of their own (workflows/cleanup_hosts.py)."""

    host: str
    codebases: list[Codebase]
    kinds: list[CleanupKind]
    key: str


@dataclass
class Breakdown:
    """`Worktrees: N/LIMIT` and its merged / stale / active split."""

    total: int
    limit: int
    merged: int
    stale: int
    active: int


@dataclass
class CodebaseCounts:
    """`/status`'s block: the breakdown, and each existing worktree's size (None: not counted yet)."""

    counts: Breakdown
    stale_threshold_days: int
    sizes: list[int | None]
    sandbox_warning: str | None = None  # what /status says of the sandbox (its network, or a warning) and of its limits


# The scheduled cleanup's schedule in Temporal (workers/schedule.py makes it; the dashboard asks it when it runs next).
SCHEDULE_ID = "isolation-cleanup"
