"""The git worktree provider: a worktree per environment under WORKTREE_BASE, on the host of the
codebase's checkout. One module per operation: creation, adoption, removal (and its archive), restoring, survey."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from activities.git.runner import GitRunner, run_git
from activities.providers.worktree.adoption import AdoptionFinder
from activities.providers.worktree.creation import WorktreeCreator, is_healthy_worktree
from activities.providers.worktree.removal import WorktreeRemover
from activities.providers.worktree.restoring import WorktreeRestorer, prune_archives
from activities.providers.worktree.survey import WorktreeSurveyor
from isolator.contracts.worktree import WORKTREE_PROVIDER
from isolator.settings import Settings


class WorktreeProvider:
    """isolator/contracts/isolation.py's `IsolationProvider`: each operation is its module's."""

    name = WORKTREE_PROVIDER

    def __init__(self, settings: Settings, git: GitRunner = run_git) -> None:
        self.create = WorktreeCreator(settings).create
        self.destroy = WorktreeRemover(settings).remove
        self.restore = WorktreeRestorer(settings).restore
        self.prune = partial(prune_archives, settings.worktree_base, settings=settings)
        self.adopt = AdoptionFinder(settings).find
        self.list = WorktreeSurveyor(settings, git).survey

    def validate(self, working_path: str) -> bool:
        return is_healthy_worktree(Path(working_path))
