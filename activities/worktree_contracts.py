"""What the removal and survey activities take and give: the state of worktrees on disk."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from activities.contracts import Codebase

# Why a removal was refused (RemovalReport.refused_because).
Refusal = Literal["uncommitted_changes", "not_a_worktree", "outside_base"]


@dataclass
class RemoveWorktreeInput:
    codebase: Codebase
    working_path: str
    branch: str
    force: bool = False


@dataclass
class RemovalReport:
    """What one removal did; the environment row is marked destroyed unless it was refused."""

    outcome: Literal["removed", "already_gone", "refused"]
    refused_because: Refusal | None = None
    # deleted: all its commits are upstream; kept: commits found nowhere else (no force);
    # archived: saved under refs/isolator/archive/ first (force); absent: no such branch
    branch_outcome: Literal["deleted", "kept", "archived", "absent"] = "absent"
    archive_refs: list[str] = field(default_factory=list)
    # for the user: what happened and, for archives, how to restore
    message: str = ""


@dataclass
class TrackedWorktree:
    environment_id: str
    working_path: str
    branch: str
    # the commit the branch was made at: a branch still there holds no work and needs no comparison
    start_commit: str | None = None
    # inactive past the threshold: a cleanup candidate whatever git says
    stale: bool = False


@dataclass
class SurveyInput:
    codebase: Codebase
    # the worktrees the database tracks for this codebase (active environments)
    tracked: list[TrackedWorktree]


@dataclass
class WorktreeState:
    environment_id: str
    working_path: str
    branch: str
    exists: bool  # the path is a worktree of the codebase on disk
    merged: bool  # every commit is in the default branch or its upstream, by ancestry or by patch (git cherry)
    # Asked only of cleanup candidates (merged with work of its own, or stale); False for the others.
    dirty: bool  # uncommitted or untracked changes
    unpushed: bool  # has commits found on no other branch and no remote
    tip: str | None = None  # the branch's commit; None when the branch is gone


@dataclass
class WorktreeSurvey:
    states: list[WorktreeState]
    # worktrees git knows under WORKTREE_BASE that no tracked environment covers
    orphans: list[str]
