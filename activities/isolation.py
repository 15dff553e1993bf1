"""The environments' disk work, served on the host that holds the codebase's checkout.

Each activity hands its request to the isolation provider the environment records
(activities/providers/). The `_here` and local forms answer "elsewhere" when the codebase lives on
another host, and the workflow then asks that host's queue.
"""

from __future__ import annotations

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.providers import IsolationProvider, build_providers
from isolator.contracts.environment import EnvironmentCheck, EnvironmentCheckInput
from isolator.contracts.worktree import (
    AdoptionSearch,
    AdoptQuery,
    PruneArchivesInput,
    PrunedArchive,
    RemovalReport,
    RemoveWorktreeInput,
    RestoredWorktree,
    RestoreWorktreeInput,
    SurveyInput,
    WorktreeCreation,
    WorktreeReady,
    WorktreeRequest,
    WorktreeSurvey,
)
from isolator.settings import Settings


class IsolationActivities:
    def __init__(self, settings: Settings, providers: dict[str, IsolationProvider] | None = None) -> None:
        self.settings = settings
        self.providers = providers if providers is not None else build_providers(settings)

    def _provider(self, name: str) -> IsolationProvider:
        provider = self.providers.get(name)
        if provider is None:
            raise ApplicationError(f"no isolation provider `{name}` on this worker", non_retryable=True)
        return provider

    @activity.defn
    async def validate_environment(self, check: EnvironmentCheckInput) -> EnvironmentCheck:
        if check.host != self.settings.host:
            return EnvironmentCheck(status="elsewhere")
        # One stat of a local path, microseconds: a hop to a thread pool cost more than the check.
        healthy = self._provider(check.provider).validate(check.working_path)
        return EnvironmentCheck(status="healthy" if healthy else "missing")

    @activity.defn
    async def create_worktree_here(self, request: WorktreeRequest) -> WorktreeCreation:
        """`create_worktree` as a local activity of the workflow's worker, which spares the round trip
        through the server while git works; "elsewhere" when the codebase is on another host."""
        if request.codebase.host != self.settings.host:
            return WorktreeCreation(outcome="elsewhere")
        return WorktreeCreation(outcome="ready", worktree=await self.create_worktree(request))

    @activity.defn
    async def create_worktree(self, request: WorktreeRequest) -> WorktreeReady:
        return await self._provider(request.provider).create(request)

    @activity.defn
    async def find_adoptable_worktree(self, query: AdoptQuery) -> AdoptionSearch:
        """One already on disk for this work; "elsewhere" when asked on a host that does not hold the codebase."""
        if query.codebase.host != self.settings.host:
            return AdoptionSearch("elsewhere")
        adoptable = await self._provider(query.provider).adopt(query)
        return AdoptionSearch("adoptable", adoptable) if adoptable else AdoptionSearch("none")

    @activity.defn
    async def remove_worktree(self, request: RemoveWorktreeInput) -> RemovalReport:
        return await self._provider(request.provider).destroy(request)

    @activity.defn
    async def restore_worktree(self, request: RestoreWorktreeInput) -> RestoredWorktree:
        return await self._provider(request.provider).restore(request)

    @activity.defn
    async def prune_archives(self, request: PruneArchivesInput) -> list[PrunedArchive]:
        return await self._provider(request.provider).prune(request)

    @activity.defn
    async def survey_worktrees(self, request: SurveyInput) -> WorktreeSurvey:
        return await self._provider(request.provider).list(request)
