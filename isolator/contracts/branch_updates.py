"""Others' commits on a PR's branch, taken into its worktree before a run (docs/results.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from isolator.contracts.environment import EnvironmentRef

# "nothing": origin has nothing new; "fast_forward" / "merged": taken in; "conflict": a merge is left
# in the worktree for the agent; "refused": git would not merge without touching uncommitted work, or
# the worktree is not on its own branch; "failed": origin could not be read; "no_pull_request": the
# branch has none, so nobody else pushes to it.
BranchUpdateOutcome = Literal["nothing", "fast_forward", "merged", "conflict", "refused", "failed", "no_pull_request"]


@dataclass
class BranchUpdateRequest:
    environment: EnvironmentRef
    run_id: str | None = None  # the run about to start: its recorded message gets the note
    merge_base: bool = False  # also merge the PR's base branch (a PR that conflicts with it)


@dataclass
class BranchUpdate:
    outcome: BranchUpdateOutcome
    note: str = ""  # for the agent, put before the run's text; "" when it needs to know nothing
    conflicts: list[str] = field(default_factory=list)  # files with conflict markers, left for the agent
