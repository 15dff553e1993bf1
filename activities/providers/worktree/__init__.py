"""The git worktree provider: a worktree per environment under WORKTREE_BASE, on the host of the
codebase's checkout. One module per operation: creation, adoption, removal (and its archive), restoring, survey."""

from __future__ import annotations

from pathlib import Path

from activities.git import GitRunner, run_git
from activities.providers.worktree.adoption import AdoptionFinder
from activities.providers.worktree.creation import WorktreeCreator, is_healthy_worktree
from activities.providers.worktree.removal import WorktreeRemover
from activities.providers.worktree.restoring import WorktreeRestorer, prune_archives
from activities.providers.worktree.survey import WorktreeSurveyor
from isolator.contracts.worktree import (
    WORKTREE_PROVIDER,
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


class WorktreeProvider:
    name = WORKTREE_PROVIDER

    def __init__(self, settings: Settings, git: GitRunner = run_git) -> None:
        self._creator = WorktreeCreator(settings)
        self._remover = WorktreeRemover(settings)
        self._restorer = WorktreeRestorer(settings)
        self._settings = settings
        self._finder = AdoptionFinder(settings)
        self._surveyor = WorktreeSurveyor(settings, git)

    async def create(self, request: WorktreeRequest) -> WorktreeReady:
        return await self._creator.create(request)

    async def destroy(self, request: RemoveWorktreeInput) -> RemovalReport:
        return await self._remover.remove(request)

    async def restore(self, request: RestoreWorktreeInput) -> RestoredWorktree:
        return await self._restorer.restore(request)

    async def prune(self, request: PruneArchivesInput) -> list[PrunedArchive]:
        return await prune_archives(self._settings.worktree_base, request)

    def validate(self, working_path: str) -> bool:
        return is_healthy_worktree(Path(working_path))

    async def adopt(self, query: AdoptQuery) -> Adoptable | None:
        return await self._finder.find(query)

    async def list(self, request: SurveyInput) -> WorktreeSurvey:
        return await self._surveyor.survey(request)
