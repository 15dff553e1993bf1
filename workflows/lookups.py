"""What a message asks to isolate, and the lookups of the create path: reuse by identity, share, adopt, limit.

Runs since `versions.CREATE_PATH_V2` ask the three lookups at once (one wait instead of three): their
answers are taken in the decision order, and a lookup's failure is raised only when its step reads
it. Older runs replay asking each one when its step comes.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TypeGuard

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from isolator.contracts.codebase import Codebase
    from isolator.contracts.environment import (
        Environment,
        EnvironmentCount,
        IdentityQuery,
    )
    from isolator.contracts.message import Conversation, IsolationHints
    from isolator.contracts.worktree import (
        Adoptable,
        AdoptQuery,
        WorktreeReady,
        WorktreeRequest,
    )
    from workflows.chat import texts
    from workflows.errors import result_or_raise
    from workflows.naming import branch_for, thread_identity
    from workflows.steps import versions
    from workflows.steps.environments import records as environments, isolation


@dataclass
class Work:
    """The identity of the work a message is about, and the worktree it would get."""

    codebase: Codebase
    workflow_type: str
    workflow_id: str
    request: WorktreeRequest
    hints: IsolationHints

    @property
    def identity(self) -> IdentityQuery:
        return IdentityQuery(self.codebase.id, self.workflow_type, self.workflow_id)

    @property
    def adoption(self) -> AdoptQuery:
        pr_branch = self.hints.pr_head_branch if self.workflow_type == "pr" else None
        return AdoptQuery(self.codebase, self.request.branch, pr_branch)

    def announcement(self, worktree: WorktreeReady) -> str:
        if self.workflow_type == "pr" and self.hints.pr_head_sha:
            # The branch the work happens on: the PR's own, or `pr-N-review` for a fork.
            return texts.reviewing_pr(self.hints.pr_head_sha, worktree.branch) + texts.config_note(worktree.config_problem)
        return texts.created(worktree)


def work_of(conversation: Conversation, codebase: Codebase, hints: IsolationHints) -> Work:
    workflow_type = hints.workflow_type
    workflow_id = hints.workflow_id or thread_identity(conversation.platform, conversation.conversation_id)
    return Work(codebase, workflow_type, workflow_id, _worktree_request(codebase, workflow_type, workflow_id, hints), hints)


def _worktree_request(codebase: Codebase, workflow_type: str, workflow_id: str, hints: IsolationHints) -> WorktreeRequest:
    """What to create: a PR is checked out on its own branch, or at its head SHA when from a fork."""
    if workflow_type == "pr" and hints.pr_is_fork:
        return WorktreeRequest(codebase, f"pr-{workflow_id}-review", source="pr_fork", pr_number=workflow_id,
                               head_sha=hints.pr_head_sha)
    if workflow_type == "pr" and hints.pr_head_branch:
        return WorktreeRequest(codebase, hints.pr_head_branch, source="pr_branch", pr_number=workflow_id,
                               head_sha=hints.pr_head_sha)
    if workflow_type == "pr":  # the platform could not say which branch: review on a branch of our own
        return WorktreeRequest(codebase, branch_for("review", workflow_id))
    return WorktreeRequest(codebase, branch_for(workflow_type, workflow_id))


@dataclass
class Lookups:
    """The answers, each read by its step: `existing` at once, the others through their methods."""

    work: Work
    existing: Environment | None
    asked_together: bool
    _adoption: Adoptable | None | BaseException = None
    _count: EnvironmentCount | BaseException | None = field(default=None)

    async def adoptable(self) -> Adoptable | None:
        if self.asked_together:
            return result_or_raise(self._adoption)
        return await isolation.find_adoptable_worktree(self.work.adoption)

    async def count(self) -> EnvironmentCount:
        """For the limit step. An existing environment that the path got past was retired: one fewer
        now, so it is counted again."""
        if self.asked_together and self.existing is None and self._count is not None:
            return result_or_raise(self._count)
        return await count_for_limit(self.work.codebase.id)


async def look_up(work: Work) -> Lookups:
    if not versions.create_path_v2_or_later():
        return Lookups(work, await environments.find_environment_by_identity(work.identity), asked_together=False)
    found, adoption, count = await asyncio.gather(
        environments.find_environment_by_identity(work.identity),
        isolation.find_adoptable_worktree(work.adoption),
        environments.count_environments(work.codebase.id),
        return_exceptions=True,
    )
    return Lookups(work, result_or_raise(found), asked_together=True, _adoption=adoption, _count=count)


@dataclass
class Shared:
    """The worktree of an issue that a PR fixes, which the PR's conversation shares."""

    issue: str
    environment: Environment


async def linked_issue_environment(codebase: Codebase, hints: IsolationHints) -> Shared | None:
    """A linked issue's healthy environment (the issue a PR fixes)."""
    for issue in hints.linked_issues:
        linked = await environments.find_environment_by_identity(IdentityQuery(codebase.id, "issue", issue))
        if linked is not None and (await isolation.validate_environment(linked, codebase.host)).status == "healthy":
            return Shared(issue, linked)
    return None


def recorded_by_this_message(environment: Environment | None) -> TypeGuard[Environment]:
    """An environment this very message recorded in an attempt whose answer was lost: its step is finished
    again (workflows/message.py), not taken for another message's worktree."""
    return (environment is not None and environment.recorded_by == workflow.info().workflow_id
            and versions.finishes_own_record())


async def count_for_limit(codebase_id: str) -> EnvironmentCount:
    """The codebase's environments that count against its limit; runs before V2 listed them."""
    if versions.create_path_v2_or_later():
        return await environments.count_environments(codebase_id)
    listing = await environments.list_environments(codebase_id)
    return EnvironmentCount(len(listing.environments), listing.limit)
