"""The scheduled cleanup end to end: one sweep the `isolation-cleanup` schedule starts on real git,
PostgreSQL and Temporal, and what that sweep costs in git processes. How worker starts create and
update the schedule: test_cleanup_schedule_workers.py."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import (
    ScheduleHandle,
    WorkflowExecutionStatus,
)

from activities.environments.isolation import IsolationActivities
from activities.git.runner import GitResult, run_git
from activities.providers import build_providers
from isolator.contracts.cleanup import CleanupReport, Skipped
from isolator.settings import Settings
from tests.archives import archive_git
from tests.conftest import Stack
from tests.fakes.telegram_api import FakeTelegram
from tests.gitrepos import branches, git, worktree_paths
from tests.platforms.telegram import PRIVATE, message, resolution, send
from tests.schedules import commit_in, go_quiet, row, run_triggered_sweep, subcommand
from workers import worker as worker_module
from workers.schedule import ensure_cleanup_schedule
from workflows.naming import thread_branch

# Telegram conversations are needed by one test only, but the `settings` fixture is the module's.


class GitLog:
    """run_git itself, recording where each git process of the survey ran."""

    def __init__(self) -> None:
        self.calls: list[tuple[tuple[str, ...], Path]] = []

    async def __call__(self, *args: str, cwd: Path | str | None = None, check: bool = True) -> GitResult:
        self.calls.append((args, Path(cwd or ".")))
        return await run_git(*args, cwd=cwd, check=check)

    def since(self, mark: int) -> list[tuple[tuple[str, ...], Path]]:
        return self.calls[mark:]


@pytest.fixture
def survey_git(monkeypatch: pytest.MonkeyPatch) -> GitLog:
    """The workers' survey activity runs git through a GitLog (the workers are built after this)."""
    log = GitLog()

    class LoggedIsolation(IsolationActivities):
        def __init__(self, settings: Settings, **given: Any) -> None:
            super().__init__(settings, build_providers(settings, git=log), **given)

    monkeypatch.setattr(worker_module, "IsolationActivities", LoggedIsolation)
    return log


@pytest.fixture
async def stack(survey_git: GitLog, stack: Stack) -> Stack:
    """The shared stack, its workers built with the logged survey."""
    return stack


# --- the schedule ----------------------------------------------------------------------------------


# --- one sweep -------------------------------------------------------------------------------------


async def test_a_triggered_sweep_removes_merged_and_stale_work_and_keeps_the_rest(
    stack: Stack, repo: Path, fake: FakeTelegram, schedule: ScheduleHandle, survey_git: GitLog
) -> None:
    await stack.register(repo)
    days = stack.settings.stale_threshold_days + 1

    async def thread(conversation: str) -> tuple[str, Path, str]:
        result = (await stack.say(conversation, "work on it"))["result"]
        assert result["outcome"] == "created"
        return result["environmentId"], Path(result["workingPath"]), result["branch"]

    # merged by ancestry, and its conversation went on to a task of its own: nothing references it
    merged_id, merged_path, merged_branch = await thread("merged")
    commit_in(merged_path, "merged.txt", "merged work\n")
    git("merge", "-q", "--no-ff", "-m", "merge", merged_branch, cwd=repo)
    assert (await stack.say("merged", "/worktree create follow-up"))["result"]["outcome"] == "command"
    # squash-merged: its one commit applied to main as a new commit with the same patch
    squashed_id, squashed_path, squashed_branch = await thread("squashed")
    commit_in(squashed_path, "squashed.txt", "squashed work\n")
    git("merge", "-q", "--squash", squashed_branch, cwd=repo)
    git("commit", "-q", "-m", "squash", cwd=repo)
    assert git("cherry", "main", squashed_branch, cwd=repo).startswith("-")
    assert (await stack.say("squashed", "/worktree link task-follow-up"))["result"]["outcome"] == "command"
    # merged too, but its conversation is still going
    busy_id, busy_path, busy_branch = await thread("busy")
    commit_in(busy_path, "busy.txt", "busy work\n")
    git("merge", "-q", "--no-ff", "-m", "merge busy", busy_branch, cwd=repo)
    # stale: silent past the threshold, nothing of its own
    stale_id, stale_path, stale_branch = await thread("stale")
    await go_quiet(stack, "test", "stale", days)
    # stale too, with uncommitted work: it goes too, into its archive
    dirty_id, dirty_path, dirty_branch = await thread("dirty")
    (dirty_path / "draft.txt").write_text("half done\n")
    await go_quiet(stack, "test", "dirty", days)
    # stale as well, but Telegram chats are long-lived workspaces
    chat = f"{PRIVATE['id']}:0"
    telegram = await resolution(stack, await send(stack, message=message("fix the login bug")))
    assert (telegram.outcome, telegram.branch) == ("created", thread_branch(f"telegram:{chat}"))
    await go_quiet(stack, "telegram", chat, days)
    # its folder deleted by hand
    gone_id, gone_path, _ = await thread("gone")
    shutil.rmtree(gone_path)
    # a worktree no row tracks
    orphan = stack.settings.worktree_base / "project" / "by-hand"
    git("worktree", "add", "-q", "-b", "by-hand", "--", str(orphan), "main", cwd=repo)
    follow_up = await stack.db.fetchval(
        "SELECT id::text FROM isolation_environments WHERE branch_name = 'task-follow-up'"
    )
    assert follow_up is not None

    await ensure_cleanup_schedule(stack.temporal, stack.settings)
    mark = len(survey_git.calls)
    report = await run_triggered_sweep(stack, schedule)

    assert [args[:2] for args, _ in survey_git.since(mark)].count(("worktree", "list")) == 1, "one survey"
    (codebase,) = report.codebases
    assert codebase.codebase == "project"
    assert sorted(codebase.removed) == sorted([
        f"{merged_branch} (merged)", f"{squashed_branch} (merged)", f"{stale_branch} ({days} days inactive)",
        f"{dirty_branch} ({days} days inactive)",
    ])
    assert codebase.skipped == [Skipped(busy_branch, "still used by 1 conversation(s)")]
    assert codebase.missing == [str(gone_path)]
    assert codebase.orphans == [str(orphan.resolve())]

    for gone in (merged_id, squashed_id, stale_id, dirty_id, gone_id):
        assert await row(stack, gone) == "destroyed"
    for kept in (busy_id, telegram.environment_id, follow_up):
        assert await row(stack, kept) == "active"
    assert not any(path.exists() for path in (merged_path, squashed_path, stale_path, dirty_path))
    assert archive_git(repo, "show", f"refs/isolator/archive/{dirty_id}:draft.txt") == "half done\n"
    assert busy_path.is_dir() and Path(telegram.working_path).is_dir() and orphan.is_dir()
    assert sorted(worktree_paths(repo)) == sorted(
        str(path) for path in (busy_path, Path(telegram.working_path), orphan.resolve(),
                               stack.settings.worktree_base.resolve() / "project" / "task-follow-up")
    )
    # every removed one's branch stays with its archive, until the retention prunes it
    assert {merged_branch, squashed_branch, stale_branch, dirty_branch, busy_branch, "by-hand"} <= set(branches(repo))
    for removed in (merged_id, squashed_id, stale_id, dirty_id):
        description = await stack.temporal.get_workflow_handle(f"environment:{removed}").describe()
        assert description.status == WorkflowExecutionStatus.COMPLETED


# --- cost ------------------------------------------------------------------------------------------


async def test_a_sweep_surveys_each_codebase_once_at_a_fixed_cost_plus_its_candidates(
    stack: Stack, repo: Path, schedule: ScheduleHandle, survey_git: GitLog
) -> None:
    """The git processes of a codebase's survey: three for the repository, whatever the number of
    environments; one `git cherry` per branch with a commit of its own not merged by ancestry (fewer
    than four of them: from four, one batch); one `for-each-ref --contains` per stale candidate with
    work of its own; none in the worktrees. Fresh branches cost nothing. (Removals run git of their own.)"""
    await stack.register(repo)
    await ensure_cleanup_schedule(stack.temporal, stack.settings)
    days = stack.settings.stale_threshold_days + 1
    repository = repo.resolve()

    async def environment(conversation: str, *, quiet: bool = False, commits: int = 0) -> Path:
        result = (await stack.say(conversation))["result"]
        assert result["outcome"] == "created"
        path = Path(result["workingPath"])
        for number in range(commits):
            commit_in(path, f"{conversation}-{number}.txt", "work in progress\n")
        if quiet:
            await go_quiet(stack, "test", conversation, days)
        return path

    async def sweep() -> tuple[CleanupReport, list[str]]:
        """The sweep's report, and the git commands its survey ran in the repository (none ran elsewhere)."""
        mark = len(survey_git.calls)
        (report,) = (await run_triggered_sweep(stack, schedule)).codebases
        calls = survey_git.since(mark)
        assert [cwd for _, cwd in calls if cwd.resolve() != repository] == [], "nothing asked in a worktree"
        return report, [subcommand(args) for args, _ in calls]

    once = ["worktree", "for-each-ref", "for-each-ref"]  # the listing, the refs, ancestry for every branch
    per_branch_with_one_commit = ["cherry"]

    # three environments, two of them candidates (stale)
    small = [await environment("stale-1", quiet=True), await environment("stale-2", quiet=True),
             await environment("live-1")]
    report, in_repository = await sweep()
    assert len(report.removed) == 2 and not small[0].exists() and not small[1].exists()
    assert in_repository == once, "fresh stale branches have no work of their own to ask about"

    # twelve: again two candidates, and nine more environments in use, three of them with commits of their own
    large = [small[2], await environment("stale-3", quiet=True), await environment("stale-4", quiet=True)]
    large += [await environment(f"live-{n}") for n in range(2, 8)]
    large += [await environment(f"busy-{n}", commits=1) for n in range(3)]
    report, in_repository = await sweep()
    assert len(report.removed) == 2 and report.skipped == []
    assert not large[1].exists() and not large[2].exists()
    assert in_repository[:3] == once and in_repository.count("worktree") == 1, "one survey of the codebase"
    assert sorted(in_repository[3:]) == sorted(per_branch_with_one_commit * 3)
