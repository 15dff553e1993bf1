"""The cleanup's vocabulary, in one place: fresh, merged, stale and live, and from them which
environments a cleanup removes and why the others stay. Dirty is no reason to stay: every removal
archives the worktree's changes, and `/worktree restore` brings them back.

Pure functions of the facts that the database (a TrackedEnvironment) and git (a WorktreeState) report.
Workflows call them directly; the survey asks them which worktrees are worth more git processes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from isolator.contracts.cleanup import (
    Breakdown,
    CleanupKind,
    EnvironmentListing,
    OpenConversation,
    Skipped,
    TrackedEnvironment,
)
from isolator.contracts.codebase import repository_full_name
from isolator.contracts.environment import EnvironmentRef
from isolator.contracts.worktree import TrackedWorktree, WorktreeState, WorktreeSurvey

# Telegram chats are long-lived workspaces: never stale (the reference plans' rule).
NEVER_STALE_PLATFORMS = {"telegram"}


def is_fresh(start_commit: str | None, tip: str | None) -> bool:
    """A branch still at the commit we started it from holds no work yet, however far the base moves."""
    return start_commit is not None and tip == start_commit


def is_merged(environment: TrackedEnvironment, state: WorktreeState) -> bool:
    """All its work is upstream (git says its commits are in the base), and it has work of its own."""
    return state.merged and not is_fresh(environment.start_commit, state.tip)


def is_stale(environment: TrackedEnvironment, threshold_days: int) -> bool:
    return environment.created_by_platform not in NEVER_STALE_PLATFORMS and environment.days_inactive >= threshold_days


def is_live(conversation: OpenConversation, threshold_days: int) -> bool:
    """An open conversation still holds its environment until it falls silent for the stale threshold;
    one on a platform that never goes stale holds it until it is closed."""
    return conversation.platform in NEVER_STALE_PLATFORMS or conversation.days_inactive < threshold_days


def live_conversations(environment: TrackedEnvironment, threshold_days: int) -> int:
    return sum(is_live(conversation, threshold_days) for conversation in environment.open_conversations)


def needs_worktree_facts(tracked: TrackedWorktree, merged: bool, tip: str | None) -> bool:
    """Whether the survey asks git if a branch's commits are on no other branch or remote: only for a
    stale one not merged (a merged one's work is upstream, and a dirty one goes into its archive)."""
    return tip is not None and tracked.stale and not merged


@dataclass
class Candidate:
    environment: EnvironmentRef
    why: str  # "merged", "45 days inactive", "path gone"
    proof: str | None = None  # a merged one's: which check said so (the survey's merge proof)

    def reason(self) -> str:
        return f"{self.why}: {self.proof}" if self.proof else self.why


@dataclass
class CleanupPlan:
    remove: list[Candidate] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)


def tracked_worktrees(listing: EnvironmentListing) -> list[TrackedWorktree]:
    """What a survey is asked: each worktree, with what the rules already know, so that git is asked
    about fresh branches and live conversations only what it must."""
    return [
        TrackedWorktree(environment.ref.environment_id, environment.ref.working_path, environment.ref.branch,
                        environment.start_commit, is_stale(environment, listing.stale_threshold_days),
                        pull_request_of(environment.ref))
        for environment in listing.environments
    ]


def pull_request_of(environment: EnvironmentRef) -> str | None:
    """`owner/repo#N` of a GitHub PR's environment, whose merge GitHub can prove; None for the others."""
    if environment.platform != "github" or environment.workflow_type != "pr":
        return None
    full_name = repository_full_name(environment.codebase.repository_url)
    return f"{full_name}#{environment.workflow_id}" if full_name else None


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
        reason = _reason_to_keep(environment, state, why, threshold_days)
        if reason:
            plan.skipped.append(Skipped(environment.ref.branch, reason))
        else:
            plan.remove.append(Candidate(environment.ref, why, state.merge_proof if why == "merged" else None))
    return plan


def _reason_to_keep(environment: TrackedEnvironment, state: WorktreeState, why: str, threshold_days: int) -> str | None:
    live = live_conversations(environment, threshold_days)
    if live:
        return f"still used by {live} conversation(s)"
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


def stale_hibernated(environments: list[TrackedEnvironment], threshold_days: int) -> list[Candidate]:
    """Hibernated environments whose conversations fell silent go as stale worktrees do (their archives
    stay, restorable, for the retention): otherwise, where no platform closes a conversation, nothing would."""
    return [Candidate(environment.ref, f"{environment.days_inactive} days inactive") for environment in environments
            if is_stale(environment, threshold_days) and not live_conversations(environment, threshold_days)]


def hibernation_order(environments: list[TrackedEnvironment], sizes: dict[str, int]) -> list[TrackedEnvironment]:
    """Over the disk budget, who hibernates first: the least recently active (each environment's
    workflow refuses when a run, set-up or removal is under way, and the next is asked)."""
    measured = [environment for environment in environments if sizes.get(environment.ref.environment_id)]
    return sorted(measured, key=lambda environment: -environment.seconds_inactive)


def cleanup_verdict(environment: EnvironmentRef, plan: CleanupPlan, fresh: bool = False) -> str:
    """What a cleanup of every kind would do with one environment, and why (`/worktree why`). A fresh
    branch has no work to be merged or unmerged: it is said so, not called "not merged"."""
    for candidate in plan.remove:
        if candidate.environment.environment_id == environment.environment_id:
            return f"the next cleanup removes it ({candidate.why})"
    for skipped in plan.skipped:
        if skipped.branch == environment.branch:
            return f"the cleanup keeps it although it qualifies: {skipped.reason}"
    if fresh:
        return "not a cleanup candidate: no work of its own yet (so nothing to merge), and not stale"
    return "not a cleanup candidate: not merged, and not stale"
