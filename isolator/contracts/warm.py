"""Warm worktrees: a pool per codebase, made and set up in advance at the fresh base (docs/warm.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from isolator.contracts.codebase import Codebase
from isolator.contracts.worktree import WorktreeReady

# making, refreshing, removing: a refill works on it; ready: claimable; failed: its set-up failed;
# claimed: a create is moving it into place
WarmState = Literal["making", "refreshing", "removing", "ready", "failed", "claimed"]


def warm_pool_workflow_id(codebase_id: str) -> str:
    return f"warm-pool:{codebase_id}"


@dataclass
class WarmClaim:
    """What `claim_warm_worktree` did: the worktree, moved into place on its branch; `none` when a
    create must make one as before (the reason logged); `elsewhere` when the codebase is on another host."""

    outcome: Literal["claimed", "none", "elsewhere"]
    worktree: WorktreeReady | None = None
    reason: str = ""
    # False for a miss when the pool is full of worktrees on their way or failed (its timer retries)
    refill: bool = True


@dataclass
class WarmPoolInput:
    codebase: Codebase
    # how often the pool looks whether the fetched base moved on (FETCH_INTERVAL_SECONDS, at least a minute)
    refresh_seconds: int = 60


@dataclass
class RefillReport:
    size: int  # the pool's size for the codebase: 0 ends its workflow
    ready: int = 0
    made: int = 0
    refreshed: int = 0  # moved to the new base (set up again or not)
    set_up_again: int = 0
    removed: int = 0
    # why the pool is short: a failed set-up, a full disk, the disk budget
    problems: list[str] = field(default_factory=list)


@dataclass
class WarmBudgetInput:
    """The scheduled cleanup's disk budget: warm worktrees go first while the codebase is over it."""

    codebase: Codebase
    environments_bytes: int  # what the codebase's environments use, as just measured
    budget_bytes: int


@dataclass
class WarmWorktreeView:
    path: str
    state: WarmState
    base_commit: str | None
    failure: str | None = None
    disk_bytes: int | None = None


@dataclass
class WarmPoolView:
    """What `/status`, `/worktree list` and `GET /api/codebases/{id}` show of the pool."""

    size: int
    worktrees: list[WarmWorktreeView] = field(default_factory=list)

    @property
    def ready(self) -> int:
        return sum(1 for worktree in self.worktrees if worktree.state == "ready")

    def describe(self) -> str:
        """One line (and one per failure) for the chat; nothing when the pool is off and empty."""
        if self.size == 0 and not self.worktrees:
            return ""
        bases = sorted({w.base_commit[:7] for w in self.worktrees if w.base_commit and w.state == "ready"})
        at = f" at {', '.join(f'`{base}`' for base in bases)}" if bases else ""
        states = ", ".join(f"{sum(1 for w in self.worktrees if w.state == state)} {state}"
                           for state in ("making", "refreshing", "failed", "claimed")
                           if any(w.state == state for w in self.worktrees))
        line = f"Warm worktrees: {self.ready} of {self.size} ready{at}" + (f" ({states})" if states else "")
        failures = [f"  warm set-up failed: {w.failure}" for w in self.worktrees if w.state == "failed" and w.failure]
        return "\n".join([line, *failures[:3]])
