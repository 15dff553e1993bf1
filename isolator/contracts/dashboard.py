"""What the dashboard asks workflows that look at git (the API never runs git itself)."""

from __future__ import annotations

from dataclasses import dataclass, field

from isolator.contracts.cleanup import Skipped
from isolator.contracts.codebase import Codebase


@dataclass
class ExplainEnvironmentInput:
    codebase: Codebase
    environment_id: str


@dataclass
class PlannedRemoval:
    environment_id: str
    branch: str
    reason: str  # "merged: squash-merged into main", "45 days inactive", "path gone"


@dataclass
class CleanupPreview:
    """What a cleanup of one codebase would do now (missing, merged, stale), and nothing done."""

    codebase: str
    remove: list[PlannedRemoval] = field(default_factory=list)
    keep: list[Skipped] = field(default_factory=list)  # qualified, and kept: why
