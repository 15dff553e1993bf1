"""The cleanup sweep: one classification pass (list, survey, plan; nothing removed) over many environments.

The environments are `--no-checkout` worktrees, so set-up stays short, with rows made directly in
the database: a fifth merged (branches at commits of main made after their start), a fifth stale
(no activity for a month) and the rest active. The pass is run at two sizes to show how the
number of git processes grows: by the candidates, not by the environments.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import asyncpg

from activities.database import create_pool
from activities.environments.isolation import IsolationActivities
from activities.environments.records import EnvironmentActivities
from activities.providers import build_providers
from bench.figures import Figure, verdict
from bench.repos import git, make_repository
from bench.stack import Stack
from isolator.cleanup_rules import plan_cleanup, tracked_worktrees
from isolator.contracts.environment import EnvironmentsOfCodebase
from isolator.contracts.worktree import SurveyInput
from isolator.settings import load_settings
from tests.worktrees import CountingGit


@dataclass
class Pass:
    environments: int
    candidates: int
    seconds: float
    git_processes: int


def make_history(repository: Path, commits: int) -> tuple[str, list[str]]:
    """The root commit and `commits` later commits of main, oldest first."""
    root = git("rev-parse", "HEAD", cwd=repository)
    later = []
    for number in range(commits):
        (repository / "progress.txt").write_text(f"step {number}\n")
        git("add", "progress.txt", cwd=repository)
        git("commit", "-q", "-m", f"step {number}", cwd=repository)
        later.append(git("rev-parse", "HEAD", cwd=repository))
    return root, later


async def populate(pool: asyncpg.Pool, codebase_id: str, base: Path, repository: Path, size: int,
                   root: str, history: list[str]) -> None:
    """`size` environments: a fifth merged, a fifth stale, the rest active."""
    tip = history[-1]
    merged, stale = size // 5, size // 5
    rows, refs = [], []
    for index in range(size):
        branch = f"sweep-{size}-{index}"
        if index < merged:  # work that main now holds: started at the root, tip on main's history
            at, start, days = history[index % len(history)], root, 0
        else:  # fresh branches; the stale ones silent for a month
            at, start, days = tip, tip, 30 if index < merged + stale else 0
        refs.append(f"create refs/heads/{branch} {at}\n")
        rows.append((branch, str(base / branch), start, days))
    git("update-ref", "--stdin", cwd=repository, stdin="".join(refs))
    for branch, path, _, _ in rows:
        git("worktree", "add", "-q", "--no-checkout", "--", path, branch, cwd=repository)
    async with pool.acquire() as connection, connection.transaction():
        for branch, path, start, days in rows:
            environment_id = await connection.fetchval(
                """INSERT INTO isolation_environments
                       (codebase_id, workflow_type, workflow_id, working_path, branch_name, created_by_platform, metadata)
                   VALUES ($1, 'task', $2, $3, $2, 'test', $4) RETURNING id""",
                codebase_id, branch, path, {"start_commit": start},
            )
            await connection.execute(
                """INSERT INTO conversations (platform, platform_conversation_id, codebase_id, environment_id, cwd,
                                              last_activity_at)
                   VALUES ('test', $1, $2, $3, $4, now() - make_interval(days => $5))""",
                f"sweep:{branch}", codebase_id, environment_id, path, days,
            )


async def classify(pool: asyncpg.Pool, stack: Stack, codebase_id: str) -> Pass:
    settings = load_settings(database_url=stack.database_url, data_dir=stack.work / "data",
                             worktree_base_setting=stack.trees / "worktrees")
    counting = CountingGit()
    started = time.perf_counter()
    listing = await EnvironmentActivities(pool, settings).list_environments(EnvironmentsOfCodebase(codebase_id))
    codebase = listing.environments[0].ref.codebase
    survey = await IsolationActivities(settings, build_providers(settings, counting)).survey_worktrees(
        SurveyInput(codebase, tracked_worktrees(listing), plans_cleanup=True))
    plan = plan_cleanup(listing.environments, survey, ["missing", "merged", "stale"], listing.stale_threshold_days)
    seconds = time.perf_counter() - started
    return Pass(len(listing.environments), len(plan.remove) + len(plan.skipped), seconds, counting.calls)


async def sweep(stack: Stack, repositories: Path, sizes: tuple[int, int]) -> list[Figure]:
    pool = await create_pool(stack.database_url, max_size=4)
    try:
        passes = []
        for size in sizes:
            repository = repositories / f"sweep-{size}"
            make_repository(repository, files=50, folders=1)
            root, history = make_history(repository, commits=min(size // 5, 100))
            registered = (await stack.api.post("/api/codebases", json={"path": str(repository)})).json()
            codebase_id, base = registered["id"], stack.trees / "worktrees" / registered["name"]
            await populate(pool, codebase_id, base, repository, size, root, history)
            await classify(pool, stack, codebase_id)  # warm: the OS's file cache, not our code
            passes.append(min([await classify(pool, stack, codebase_id) for _ in range(3)],
                              key=lambda measured: measured.seconds))
    finally:
        await pool.close()
    small, large = passes
    growth = (large.git_processes - small.git_processes) / max(large.candidates - small.candidates, 1)
    return [
        Figure(f"cleanup classification, {large.environments} environments", f"{large.seconds:.2f} s",
               f"{small.environments} environments: {small.seconds:.2f} s", verdict(large.seconds <= 3),
               {"passes": [vars(measured) for measured in passes]}),
        Figure("  git processes per pass",
               f"{large.git_processes} for {large.candidates} candidates",
               f"{small.git_processes} for {small.candidates}; +{growth:.2f} per added candidate",
               verdict(growth <= 1.0), {"per_added_candidate": round(growth, 2)}),
    ]
