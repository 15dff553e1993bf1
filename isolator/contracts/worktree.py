"""Worktrees on disk: creating, adopting, removing and surveying them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from isolator.contracts.codebase import Codebase
from isolator.contracts.repository import ConfigProblem, RepositorySetup, WorktreeBase

# The isolation provider of every environment so far (activities/providers/): a git worktree.
WORKTREE_PROVIDER = "worktree"


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
    provider: str = WORKTREE_PROVIDER  # which provider serves it (activities/providers/)


@dataclass
class WorktreeReady:
    path: str
    branch: str
    # False when a healthy worktree on this branch was already at the path
    created: bool
    # the default branch's commit a new branch was started at; a branch still there holds no work
    fresh_from: str | None = None
    # where a new branch of the default source started: origin's default branch, or the local one and why
    base: WorktreeBase | None = None
    # the repository's set-up as committed at the base, handed to the environment's workflow; a
    # malformed file is said in the reply, and the worktree is made without set-up
    setup: RepositorySetup | None = None
    warm: bool = False  # claimed from the codebase's warm pool (recorded: docs/observability.md)

    @property
    def config_problem(self) -> ConfigProblem | None:
        return self.setup.problem if self.setup is not None else None


@dataclass
class WorktreeCreation:
    """What `create_worktree_here` did; "elsewhere" when asked on a host that does not hold the codebase."""

    outcome: Literal["ready", "elsewhere"]
    worktree: WorktreeReady | None = None


@dataclass
class AdoptQuery:
    codebase: Codebase
    # the branch the service would create; its worktree path is the expected path
    branch: str
    # the PR's branch; a worktree on it, or on its slugified form, is adopted too
    pr_branch: str | None = None
    provider: str = WORKTREE_PROVIDER  # which provider serves it (activities/providers/)


@dataclass
class Adoptable:
    path: str
    branch: str


@dataclass
class AdoptionSearch:
    """What `find_adoptable_worktree` found; "elsewhere" when asked on a host that does not hold the codebase."""

    outcome: Literal["adoptable", "none", "elsewhere"]
    adoptable: Adoptable | None = None


# Why a removal was refused (RemovalReport.refused_because).
Refusal = Literal["uncommitted_changes", "not_a_worktree", "outside_base", "agent_running", "busy", "unreadable"]


@dataclass
class RemoveWorktreeInput:
    codebase: Codebase
    working_path: str
    branch: str
    force: bool = False  # a dirty worktree goes too (archived first)
    provider: str = WORKTREE_PROVIDER  # which provider serves it (activities/providers/)
    # names the archive (refs/isolator/archive/<id>); empty for a worktree of no environment (an undone
    # create), which is then never removed dirty
    environment_id: str = ""


@dataclass
class RemovalReport:
    """What one removal did; the environment row is marked destroyed unless it was refused."""

    outcome: Literal["removed", "already_gone", "refused"]
    refused_because: Refusal | None = None
    # archived: kept with the worktree's archive; deleted: no archive, all its commits upstream or
    # elsewhere; kept: no archive, but commits found nowhere else (or checked out elsewhere); absent: none
    branch_outcome: Literal["deleted", "kept", "archived", "absent"] = "absent"
    archive_refs: list[str] = field(default_factory=list)
    branch_tip: str | None = None  # the branch's commit when it was archived
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
    # a GitHub PR's environment: `owner/repo#N`, whose merge GitHub can prove when git cannot
    pull_request: str | None = None


# The scheduled cleanup's time budget for counting every worktree: long enough for large trees, bounded.
SCHEDULED_DISK_SECONDS = 60.0


@dataclass
class SurveyInput:
    codebase: Codebase
    # the worktrees the database tracks for this codebase (active environments)
    tracked: list[TrackedWorktree]
    provider: str = WORKTREE_PROVIDER  # which provider serves it (activities/providers/)
    # `/status` and `/worktree list` show each worktree's size; the cleanup does not wait for it
    measure_disk: bool = False
    disk_seconds: float | None = None  # the measuring's time budget; None: the survey's own (for /status)
    # the cleanup (and its dry run) asks GitHub about PRs git finds unmerged; `/status` does not wait for it
    ask_github: bool = False
    # a cleanup plan is made from it (the cleanup, its dry run, `/worktree why`): its stale candidates are
    # asked whether their commits are on no other branch or remote; views (`/status`, lists) never read that
    plans_cleanup: bool = False


@dataclass
class WorktreeState:
    """Raw facts about one tracked worktree, as git reports them; isolator/cleanup_rules.py says what
    they mean for the cleanup (merged, removable)."""

    environment_id: str
    working_path: str
    branch: str
    exists: bool  # the path is a worktree of the codebase on disk
    # Contained in the base: every commit is in the default branch or its upstream, by ancestry or
    # by patch. (A branch still at its start commit is contained too; the rules tell it apart.)
    merged: bool
    # Asked only of the worktrees the rules name (cleanup_rules.needs_worktree_facts) when a cleanup is
    # planned; False for the others.
    unpushed: bool  # has commits found on no other branch and no remote
    tip: str | None = None  # the branch's commit; None when the branch is gone
    disk_bytes: int | None = None  # real blocks, when measured and counted within the survey's time budget
    merge_proof: str | None = None  # when merged: which check said so, in words (merged.merge_proof)


@dataclass
class WorktreeSurvey:
    states: list[WorktreeState]
    # worktrees git knows under WORKTREE_BASE that no tracked environment covers
    orphans: list[str]


@dataclass
class ExplainRequest:
    """`/worktree why`: the facts git and the disk hold about one worktree."""

    codebase: Codebase
    working_path: str
    branch: str


@dataclass
class WorktreeFacts:
    exists: bool
    uncommitted: list[str] = field(default_factory=list)  # `git status --short` lines, the first few
    uncommitted_count: int = 0
    unpushed: list[str] = field(default_factory=list)  # `abc1234 subject` of commits on no remote, the first few
    unpushed_count: int = 0
    disk_bytes: int = 0  # real blocks (st_blocks), a hard link counted once
    disk_complete: bool = True  # False: the count stopped at its time budget (then at least disk_bytes)
    # which check says the branch is merged: its tip an ancestor of the base, or every change in it by patch id
    merged_by: str | None = None
    archive_refs: list[str] = field(default_factory=list)


@dataclass
class RestoreWorktreeInput:
    """Bring a worktree back from its archive, at `working_path` on `branch` (made again at
    `branch_tip` when it was deleted by hand)."""

    codebase: Codebase
    working_path: str
    branch: str
    archive_ref: str
    branch_tip: str | None
    provider: str = WORKTREE_PROVIDER


@dataclass
class RestoredWorktree:
    outcome: Literal["restored", "refused"]
    message: str = ""  # why it was refused, for the user
    setup: RepositorySetup | None = None  # `.isolator.toml` of the default branch, never the restored one's


@dataclass
class ArchivedBranch:
    environment_id: str
    archive_ref: str
    branch: str


@dataclass
class PruneArchivesInput:
    codebase: Codebase
    archives: list[ArchivedBranch]
    provider: str = WORKTREE_PROVIDER


@dataclass
class PrunedArchive:
    environment_id: str
    branch: str
    # what became of the branch once no archive refers to it: deleted (its work is upstream or
    # elsewhere), kept (it has work of its own, or another archive or worktree uses it), absent
    branch_outcome: Literal["deleted", "kept", "absent"]
