"""Removed and hibernated environments, and bringing them back: the rows behind `/worktree removed`,
`/worktree restore`, `POST /api/environments/{id}/restore`, the retention and the disk budget."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from isolator.contracts.codebase import Codebase
from isolator.contracts.worktree import ArchivedBranch, PrunedArchive

# The codebase's archive store, in its common git dir (activities/providers/worktree/archive_store.py).
ARCHIVE_STORE = "isolator-archives"


@dataclass
class RemovedEnvironment:
    """An environment whose worktree is archived: removed (destroyed) or hibernated."""

    id: str
    codebase: Codebase
    status: Literal["destroyed", "hibernated"]
    workflow_type: str
    workflow_id: str
    working_path: str
    branch: str
    archive_ref: str
    branch_tip: str | None
    removed_at: str  # ISO 8601
    reason: str | None
    days_left: int  # until the retention prunes its archive (a hibernated one's is never pruned)
    provider: str
    from_fork: bool = False
    start_commit: str | None = None
    restored_as: str | None = None  # a restore brought it back already, as this environment
    # an active (or hibernated) environment now holds its path or its identity: it cannot come back
    conflict: str | None = None
    # that environment: an active one on the same branch can take the archived files in (holder_id)
    holder_id: str | None = None
    holder_branch: str | None = None
    holder_path: str | None = None
    holder_status: str | None = None


@dataclass
class RemovedQuery:
    codebase_id: str
    name: str | None = None  # a branch or `type-id`; None: all of the codebase's


@dataclass
class RemovedListing:
    environments: list[RemovedEnvironment]  # newest first
    retention_days: int
    restored: int = 0  # removed within the retention and restored already: not listed, but not "none removed"


@dataclass
class RestoreRequest:
    """Restore removed environment `environment_id`; the asking conversation (none through the API)
    is attached to it."""

    environment_id: str
    key: str  # the restore's own: a retry recognises what it already did
    conversation_row_id: str | None = None
    platform: str | None = None
    conversation_id: str | None = None
    previous_environment_id: str | None = None  # the asking conversation's, detached from it


# "brought_back": the archived files went into the active worktree of the same branch; "kept": they could
# not, and stay in the archive (the message says how to apply them)
RestoreOutcome = Literal["restored", "woken", "already_restored", "brought_back", "kept", "refused", "not_found",
                         "limit"]


@dataclass
class RestoreReport:
    outcome: RestoreOutcome
    message: str  # for the user
    environment_id: str | None = None  # the restored environment (a new one for a removed one)
    working_path: str | None = None
    branch: str | None = None


@dataclass
class RecordRestoredInput:
    removed_id: str
    key: str
    conversation_row_id: str | None = None


@dataclass
class ExpiredArchives:
    codebase: Codebase
    archives: list[ArchivedBranch] = field(default_factory=list)


@dataclass
class PrunedArchives:
    codebase_id: str
    pruned: list[PrunedArchive]


@dataclass
class DiskUse:
    """Each worktree's size as the scheduled cleanup measured it, kept with its environment."""

    sizes: dict[str, int]  # environment id -> bytes
    merge_proofs: dict[str, str] = field(default_factory=dict)  # environment id -> why merged


@dataclass
class BringBackInput:
    """A removed worktree's archive brought into the active worktree that works on its branch again."""

    codebase: Codebase
    archive_ref: str
    branch: str
    working_path: str  # the active worktree's


@dataclass
class BroughtBack:
    """"applied": the archived files are in the active worktree now; "kept": they were not put over it
    (`reason`), and stay in the archive, `commit`, which `git stash apply <commit>` applies by hand;
    "gone": the archive no longer exists."""

    outcome: Literal["applied", "kept", "gone"]
    commit: str = ""
    reason: str = ""


@dataclass
class RecordBroughtBackInput:
    removed_id: str
    into_id: str  # the active environment the archived files went into
