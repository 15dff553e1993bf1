"""Isolation providers: the implementations of isolator/contracts/isolation.py's `IsolationProvider`.

The git worktree is the only one; a container provider would be one more module here, and one more
entry in `build_providers`.
"""

from __future__ import annotations

from activities.git.runner import GitRunner, run_git
from activities.providers.worktree import WorktreeProvider
from isolator.contracts.isolation import IsolationProvider
from isolator.settings import Settings


def build_providers(settings: Settings, git: GitRunner = run_git) -> dict[str, IsolationProvider]:
    """Every provider this worker serves, by the name environments record."""
    return {WorktreeProvider.name: WorktreeProvider(settings, git)}
