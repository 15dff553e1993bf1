"""The cleanup's vocabulary (isolator/cleanup_rules.py): fresh, merged, stale and live."""

from __future__ import annotations

from isolator.cleanup_rules import (
    breakdown,
    is_fresh,
    is_live,
    is_merged,
    is_stale,
    live_conversations,
    needs_worktree_facts,
    plan_cleanup,
    stale_hibernated,
)
from isolator.contracts.cleanup import OpenConversation, TrackedEnvironment
from isolator.contracts.codebase import Codebase
from isolator.contracts.environment import EnvironmentRef
from isolator.contracts.worktree import TrackedWorktree, WorktreeState, WorktreeSurvey

THRESHOLD = 14
CODEBASE = Codebase("c1", "project", "/repos/project", "main", "host")


def environment(
    name: str, *, platform: str = "test", days: int = 0, start: str | None = None,
    conversations: list[OpenConversation] | None = None,
) -> TrackedEnvironment:
    ref = EnvironmentRef(name, CODEBASE, f"/worktrees/project/{name}", name, "thread", name, platform)
    return TrackedEnvironment(ref, platform, days, start, conversations or [])


def state(name: str, *, merged: bool = False, tip: str | None = "tip", unpushed: bool = False) -> WorktreeState:
    return WorktreeState(name, f"/worktrees/project/{name}", name, True, merged, unpushed, tip)


def test_a_branch_still_at_its_start_is_fresh_and_so_never_merged() -> None:
    assert is_fresh("abc", "abc")
    assert not is_fresh("abc", "def") and not is_fresh(None, "abc")
    assert not is_merged(environment("a", start="abc"), state("a", merged=True, tip="abc"))
    assert is_merged(environment("a", start="abc"), state("a", merged=True, tip="def"))
    assert is_merged(environment("adopted"), state("adopted", merged=True))  # no start: adopted


def test_telegram_is_never_stale_and_its_open_conversations_stay_live() -> None:
    assert is_stale(environment("s", days=THRESHOLD), THRESHOLD)
    assert not is_stale(environment("s", days=THRESHOLD - 1), THRESHOLD)
    assert not is_stale(environment("t", platform="telegram", days=400), THRESHOLD)
    assert is_live(OpenConversation("slack", THRESHOLD - 1), THRESHOLD)
    assert not is_live(OpenConversation("slack", THRESHOLD), THRESHOLD)
    assert is_live(OpenConversation("telegram", 400), THRESHOLD)
    mixed = environment("m", conversations=[OpenConversation("slack", 1), OpenConversation("github", 30),
                                            OpenConversation("telegram", 30)])
    assert live_conversations(mixed, THRESHOLD) == 2


def test_git_is_asked_about_unpushed_work_only_for_stale_branches_not_merged() -> None:
    worktree = TrackedWorktree("w", "/worktrees/project/w", "w", start_commit="abc")
    assert not needs_worktree_facts(worktree, merged=True, tip="def")  # its work is upstream
    assert not needs_worktree_facts(worktree, merged=False, tip="def")  # not stale
    stale = TrackedWorktree("w", "/worktrees/project/w", "w", stale=True)
    assert needs_worktree_facts(stale, merged=False, tip="def")
    assert not needs_worktree_facts(stale, merged=True, tip="def")
    assert not needs_worktree_facts(stale, merged=False, tip=None)  # the branch is gone


def test_the_plan_keeps_live_and_unpushed_work_and_says_why_and_takes_dirty_work_to_its_archive() -> None:
    environments = [
        environment("merged-clean"),
        environment("merged-dirty"),
        environment("merged-used", conversations=[OpenConversation("telegram", 90)]),
        environment("stale-unpushed", days=30),
        environment("stale-clean", days=30),
        environment("fresh", start="tip"),
    ]
    survey = WorktreeSurvey(states=[
        state("merged-clean", merged=True),
        state("merged-dirty", merged=True),  # (its uncommitted changes go into its archive)
        state("merged-used", merged=True),
        state("stale-unpushed", unpushed=True),
        state("stale-clean"),
        state("fresh", merged=True),
    ], orphans=[])
    plan = plan_cleanup(environments, survey, ["merged", "stale"], THRESHOLD)
    assert [(candidate.environment.branch, candidate.why) for candidate in plan.remove] == [
        ("merged-clean", "merged"), ("merged-dirty", "merged"), ("stale-clean", "30 days inactive"),
    ]
    assert [(skipped.branch, skipped.reason) for skipped in plan.skipped] == [
        ("merged-used", "still used by 1 conversation(s)"),
        ("stale-unpushed", "has unpushed commits"),
    ]
    counts = breakdown(environments, survey, limit=25, threshold_days=THRESHOLD)
    assert (counts.total, counts.merged, counts.stale, counts.active) == (6, 3, 2, 1)


def test_hibernated_environments_go_when_stale_as_worktrees_do() -> None:
    hibernated = [
        environment("quiet", days=THRESHOLD + 1),
        environment("recent", days=THRESHOLD - 1),
        environment("chat", platform="telegram", days=400),
        environment("watched", days=THRESHOLD + 1, conversations=[OpenConversation("slack", 1)]),
    ]
    assert [(candidate.environment.branch, candidate.why) for candidate in stale_hibernated(hibernated, THRESHOLD)] == [
        ("quiet", f"{THRESHOLD + 1} days inactive"),
    ]
