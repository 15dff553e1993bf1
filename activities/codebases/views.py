"""`/status`'s worktree counts, computed on the codebase's host in one activity: the listing, the
survey and the breakdown stay here, and only the counts travel through the message's history (at a
thousand environments the listing alone was 650 KB of it)."""

from __future__ import annotations

from temporalio import activity

from activities.environments.isolation import IsolationActivities
from activities.environments.records import EnvironmentActivities
from activities.sandbox import bubblewrap, limits
from isolator.cleanup_rules import breakdown, tracked_worktrees
from isolator.contracts.cleanup import CodebaseCounts
from isolator.contracts.codebase import Codebase
from isolator.contracts.environment import EnvironmentsOfCodebase
from isolator.contracts.worktree import SurveyInput


class CodebaseViewActivities:
    def __init__(self, environments: EnvironmentActivities, isolation: IsolationActivities) -> None:
        self.environments = environments
        self.isolation = isolation  # its survey keeps what it learned: the host's one

    @activity.defn
    async def count_worktrees(self, codebase: Codebase) -> CodebaseCounts:
        listing = await self.environments.list_environments(EnvironmentsOfCodebase(codebase.id))
        survey = await self.isolation.survey_worktrees(
            SurveyInput(codebase, tracked_worktrees(listing), measure_disk=True))
        return CodebaseCounts(
            breakdown(listing.environments, survey, listing.limit, listing.stale_threshold_days),
            listing.stale_threshold_days, [state.disk_bytes for state in survey.states if state.exists],
            f"{bubblewrap.current().status}\n{limits.current().status}",
        )
