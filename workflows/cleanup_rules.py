"""Which environments a cleanup removes, and why the others stay. Pure: workflows call it directly."""

from __future__ import annotations

from dataclasses import dataclass, field

from activities.worktree_contracts import TrackedWorktree, WorktreeState, WorktreeSurvey
from activities.lifecycle_contracts import (
    Breakdown,
    CleanupKind,
    EnvironmentListing,
    EnvironmentRef,
    Skipped,
    TrackedEnvironment,
)

# Telegram chats are long-lived workspaces: never stale (the reference plans' rule).
NEVER_STALE_PLATFORMS = {"telegram"}


@dataclass
class Candidate:
    environment: EnvironmentRef
    why: str  # "merged", "45 days inactive", "path gone"


@dataclass
class CleanupPlan:
    remove: list[Candidate] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


def is_merged(environment: TrackedEnvironment, state: WorktreeState) -> bool:
    """All its work is upstream. A branch still at the commit it was started from holds no work yet."""
    fresh = environment.start_commit is not None and state.tip == environment.start_commit
    return state.merged and not fresh


def is_stale(environment: TrackedEnvironment, threshold_days: int) -> bool:
    return environment.created_by_platform not in NEVER_STALE_PLATFORMS and environment.days_inactive >= threshold_days


def tracked_worktrees(listing: EnvironmentListing) -> list[TrackedWorktree]:
    """What a survey is asked: each worktree, with what the rules already know, so that git is asked
    about fresh branches and live conversations only what it must."""
    return [
        TrackedWorktree(environment.ref.environment_id, environment.ref.working_path, environment.ref.branch,
                        environment.start_commit, is_stale(environment, listing.stale_threshold_days))
        for environment in listing.environments
    ]


def plan_cleanup(
    environments: list[TrackedEnvironment], survey: WorktreeSurvey, kinds: list[CleanupKind], threshold_days: int
) -> CleanupPlan:
    states = {state.environment_id: state for state in survey.states}
    plan = CleanupPlan()
    for environment in environments:
        state = states.get(environment.ref.environment_id)
        if state is None:
            continue
        if not state.exists:
            if "missing" in kinds:
                plan.remove.append(Candidate(environment.ref, "path gone"))
            continue
        if "merged" in kinds and is_merged(environment, state):
            why = "merged"
        elif "stale" in kinds and is_stale(environment, threshold_days):
            why = f"{environment.days_inactive} days inactive"
        else:
            continue
        reason = _reason_to_keep(environment, state, why)
        if reason:
            plan.skipped.append(Skipped(environment.ref.branch, reason))
        else:
            plan.remove.append(Candidate(environment.ref, why))
    return plan


def _reason_to_keep(environment: TrackedEnvironment, state: WorktreeState, why: str) -> str | None:
    if state.dirty:
        return "has uncommitted changes"
    if environment.live_conversations:
        return f"still used by {environment.live_conversations} conversation(s)"
    if why != "merged" and state.unpushed:
        return "has unpushed commits"
    return None


def breakdown(
    environments: list[TrackedEnvironment], survey: WorktreeSurvey, limit: int, threshold_days: int
) -> Breakdown:
    states = {state.environment_id: state for state in survey.states}
    merged = stale = 0
    for environment in environments:
        state = states.get(environment.ref.environment_id)
        if state is not None and is_merged(environment, state):
            merged += 1
        elif is_stale(environment, threshold_days):
            stale += 1
    total = len(environments)
    return Breakdown(total=total, limit=limit, merged=merged, stale=stale, active=total - merged - stale)
