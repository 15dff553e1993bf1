"""Isolation providers: where a conversation's work is isolated, behind one interface, defined once.

The reference plans' seam (create, destroy, validate, adopt, list): an environment records its
provider (`isolation_environments.provider`), and every disk activity is served by that provider
(activities/providers/). `HOST_OPERATIONS` names the activity that serves each operation a workflow
asks of the codebase's host as it is: activities/environments/isolation.py serves them from this list, and
workflows/steps/environments/isolation.py calls them from it.
"""

from __future__ import annotations

import typing
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Awaitable, Callable, Protocol

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


@dataclass(frozen=True)
class HostOperation:
    """A provider operation served on the codebase's host queue by an activity that only hands the
    request on; its request and result types are the provider method's."""

    method: Callable[..., Awaitable[Any]]  # an IsolationProvider method
    activity: str  # the activity type's name: workflow histories record it, so it never changes
    timeout: timedelta

    @property
    def request_type(self) -> type:
        return next(hint for name, hint in self._hints().items() if name != "return")

    @property
    def result_type(self) -> Any:
        return self._hints()["return"]

    def _hints(self) -> dict[str, Any]:
        return typing.get_type_hints(self.method)


CREATE = HostOperation(IsolationProvider.create, "create_worktree", timedelta(minutes=10))
DESTROY = HostOperation(IsolationProvider.destroy, "remove_worktree", timedelta(minutes=5))
RESTORE = HostOperation(IsolationProvider.restore, "restore_worktree", timedelta(minutes=10))
PRUNE = HostOperation(IsolationProvider.prune, "prune_archives", timedelta(minutes=5))
LIST = HostOperation(IsolationProvider.list, "survey_worktrees", timedelta(minutes=5))
HOST_OPERATIONS = (CREATE, DESTROY, RESTORE, PRUNE, LIST)
