"""The environments' disk work, served on the host that holds the codebase's checkout.

Each activity hands its request to the isolation provider the environment records
(activities/providers/): those of `HOST_OPERATIONS` as they are, under the activity names that list
gives. The `_here` and local forms answer "elsewhere" when the codebase lives on another host, and
the workflow then asks that host's queue.
"""

from __future__ import annotations

from typing import Any, Awaitable, Callable

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.providers import build_providers
from isolator.contracts.codebase import Codebase
from isolator.contracts.environment import EnvironmentCheck, EnvironmentCheckInput
from isolator.contracts.isolation import HOST_OPERATIONS, HostOperation, IsolationProvider
from isolator.contracts.worktree import (
    AdoptionSearch,
    AdoptQuery,
    WorktreeCreation,
    WorktreeRequest,
)
from isolator.settings import Settings


class IsolationActivities:
    """The activities of `HOST_OPERATIONS` (`create_worktree`, `remove_worktree`, `restore_worktree`,
    `prune_archives`, `survey_worktrees`), and those below that answer "elsewhere"."""

    def __init__(self, settings: Settings, providers: dict[str, IsolationProvider] | None = None,
                 ensure_checkout: Callable[[Codebase], Awaitable[bool]] | None = None) -> None:
        self.settings = settings
        self.providers = providers if providers is not None else build_providers(settings)
        # A checkout found missing is cloned again before the step (activities/codebases/rebuild.py), not
        # failed on and retried forever; one that cannot be is a user error (CHECKOUT_LOST), said once.
        self.ensure_checkout = ensure_checkout
        # What the host's queue serves besides the methods below; each is an attribute too, named as its activity.
        self.host_operations = [self._served(operation) for operation in HOST_OPERATIONS]
        for served in self.host_operations:
            setattr(self, served.__name__, served)

    def _provider(self, name: str) -> IsolationProvider:
        provider = self.providers.get(name)
        if provider is None:
            raise ApplicationError(f"no isolation provider `{name}` on this worker", non_retryable=True)
        return provider

    def _served(self, operation: HostOperation) -> Callable[..., Any]:
        """The activity that hands `operation`'s request to the environment's provider."""
        method = operation.method.__name__

        async def serve(request: Any) -> Any:
            await self._checkout_there(request.codebase)
            return await getattr(self._provider(request.provider), method)(request)

        # The SDK reads the argument and result types from the annotations, to decode and encode them.
        serve.__annotations__ = {"request": operation.request_type, "return": operation.result_type}
        serve.__name__ = serve.__qualname__ = operation.activity
        return activity.defn(name=operation.activity)(serve)

    @activity.defn
    async def validate_environment(self, check: EnvironmentCheckInput) -> EnvironmentCheck:
        return EnvironmentCheck(status=self.check_here(check))

    def check_here(self, check: EnvironmentCheckInput) -> str:
        """"healthy" or "missing" on the codebase's host; "elsewhere" on any other."""
        if check.host != self.settings.host:
            return "elsewhere"
        # One stat of a local path, microseconds: a hop to a thread pool cost more than the check.
        return "healthy" if self._provider(check.provider).validate(check.working_path) else "missing"

    @activity.defn
    async def create_worktree_here(self, request: WorktreeRequest) -> WorktreeCreation:
        """`create_worktree` as a local activity of the workflow's worker, which spares the round trip
        through the server while git works; "elsewhere" when the codebase is on another host."""
        if request.codebase.host != self.settings.host:
            return WorktreeCreation(outcome="elsewhere")
        await self._checkout_there(request.codebase)
        return WorktreeCreation(outcome="ready", worktree=await self._provider(request.provider).create(request))

    @activity.defn
    async def find_adoptable_worktree(self, query: AdoptQuery) -> AdoptionSearch:
        """One already on disk for this work; "elsewhere" when asked on a host that does not hold the codebase."""
        if query.codebase.host != self.settings.host:
            return AdoptionSearch("elsewhere")
        await self._checkout_there(query.codebase)
        adoptable = await self._provider(query.provider).adopt(query)
        return AdoptionSearch("adoptable", adoptable) if adoptable else AdoptionSearch("none")

    async def _checkout_there(self, codebase: Codebase) -> None:
        if self.ensure_checkout is not None and codebase.host == self.settings.host:
            await self.ensure_checkout(codebase)
