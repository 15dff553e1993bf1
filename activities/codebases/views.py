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
from isolator.contracts.worktree import SurveyInput, WorktreeState


class CodebaseViewActivities:
    def __init__(self, environments: EnvironmentActivities, isolation: IsolationActivities) -> None:
        self.environments = environments
        self.isolation = isolation  # its survey keeps what it learned: the host's one

    @activity.defn
    async def count_worktrees(self, codebase: Codebase) -> CodebaseCounts:
        listing = await self.environments.list_environments(EnvironmentsOfCodebase(codebase.id))
        survey = await self.isolation.survey_worktrees(
            SurveyInput(codebase, tracked_worktrees(listing), measure_disk=True))
        await self._record_disk_use(survey.states)
        return CodebaseCounts(
            breakdown(listing.environments, survey, listing.limit, listing.stale_threshold_days),
            listing.stale_threshold_days, [state.disk_bytes for state in survey.states if state.exists],
            f"{bubblewrap.current().status}\n{limits.current().status}",
        )

    async def _record_disk_use(self, states: list[WorktreeState]) -> None:
        """What `/status` counted is recorded where the dashboard reads it, so that the two say one figure."""
        counted = [(state.environment_id, state.disk_bytes) for state in states
                   if state.exists and state.disk_bytes is not None]
        if counted:
            await self.environments.pool.execute(
                """UPDATE isolation_environments e SET disk_bytes = u.bytes, disk_measured_at = now()
                   FROM unnest($1::uuid[], $2::bigint[]) AS u(id, bytes) WHERE e.id = u.id AND e.status = 'active'""",
                [environment_id for environment_id, _ in counted], [size for _, size in counted])
