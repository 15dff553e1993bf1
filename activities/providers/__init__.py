"""Isolation providers: where a conversation's work is isolated, behind one interface.

The reference plans' seam (create, destroy, validate, adopt, list): an environment records its
provider (`isolation_environments.provider`), and every disk activity is served by that provider.
The git worktree is the only one; a container provider would be one more module here, and one more
entry in `build_providers`.
"""

from __future__ import annotations

from typing import Protocol

from activities.git import GitRunner, run_git
from activities.providers.worktree import WorktreeProvider
from isolator.contracts.worktree import (
    Adoptable,
    AdoptQuery,
    PruneArchivesInput,
    PrunedArchive,
    RemovalReport,
    RemoveWorktreeInput,
    RestoredWorktree,
    RestoreWorktreeInput,
    SurveyInput,
    WorktreeReady,
    WorktreeRequest,
    WorktreeSurvey,
)
from isolator.settings import Settings


class IsolationProvider(Protocol):
    async def create(self, request: WorktreeRequest) -> WorktreeReady:
        """Make the isolated place for `request`, or return the one already made (idempotent)."""
        ...

    async def destroy(self, request: RemoveWorktreeInput) -> RemovalReport:
        """Archive it, then remove it; refused when it holds uncommitted work and `force` is not set."""
        ...

    async def restore(self, request: RestoreWorktreeInput) -> RestoredWorktree:
        """Bring it back from its archive, as it was (idempotent)."""
        ...

    async def prune(self, request: PruneArchivesInput) -> list[PrunedArchive]:
        """Delete archives past their retention, and the branches nothing else needs."""
        ...

    def validate(self, working_path: str) -> bool:
        """Is it still there and usable? Cheap: asked on every message."""
        ...

    async def adopt(self, query: AdoptQuery) -> Adoptable | None:
        """One already there for this work, made by someone else, to be recorded as it is."""
        ...

    async def list(self, request: SurveyInput) -> WorktreeSurvey:
        """The state of every tracked one of a codebase, and the untracked ones (orphans)."""
        ...


def build_providers(settings: Settings, git: GitRunner = run_git) -> dict[str, IsolationProvider]:
    """Every provider this worker serves, by the name environments record."""
    return {WorktreeProvider.name: WorktreeProvider(settings, git)}
